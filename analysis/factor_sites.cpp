#include "analysis/factor_sites.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "analysis/expression.hpp"
#include "analysis/loop_nest.hpp"
#include "analysis/token_ranges.hpp"
#include "analysis/uniformity.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::TokenKind;

// The name an lvalue stores into: `a` of a, a[i], a.x, *a.
std::string root_name(const Expr& e) {
  if (e.kind == ExprKind::Name) return e.text;
  if ((e.kind == ExprKind::Index || e.kind == ExprKind::Member || (e.kind == ExprKind::Unary && e.text == "*")) &&
      !e.children.empty())
    return root_name(e.children[0]);
  return "";
}

// Names an expression may change: assigned, stepped, address taken, or
// handed to a call that is no pure math function (a helper filling a local array).
void assigned_names(const Expr& e, std::set<std::string>& out) {
  if (is_assignment(e) && !e.children.empty()) out.insert(root_name(e.children[0]));
  if (e.kind == ExprKind::Unary && e.text == "&" && !e.children.empty()) out.insert(root_name(e.children[0]));
  if (e.kind == ExprKind::Call && !is_pure_math_function(e.callee()))
    for (std::size_t a = 1; a < e.children.size(); ++a)
      for (const std::string& n : names_in(e.children[a])) out.insert(n);
  for (const Expr& c : e.children) assigned_names(c, out);
}

bool has_call(const Expr& e) {
  if (e.kind == ExprKind::Call) return true;
  return std::any_of(e.children.begin(), e.children.end(), has_call);
}

// A statement's expression, without its `;`.
std::optional<Expr> statement_expression(const grammar::ParsedKernel& k, const Element& el) {
  const std::size_t first = next_code(k.tokens, el.tokens.first);
  if (first > el.tokens.last) return std::nullopt;
  return parse_expression(k.tokens, first, expression_end(k.tokens, first, el.tokens.last));
}

struct Factor {
  const Expr* e;
  bool divisor;
};

// `a * b / c` as {a, b, /c}; anything but * and / is one factor.
void flatten(const Expr& e, bool divisor, std::vector<Factor>& out) {
  if (!divisor && e.kind == ExprKind::Binary && e.children.size() == 2 && (e.text == "*" || e.text == "/")) {
    flatten(e.children[0], false, out);
    if (e.text == "*") flatten(e.children[1], false, out);
    else out.push_back({&e.children[1], true});
    return;
  }
  out.push_back({&e, divisor});
}

const std::string kNothingToMove = "no sum in the loop has a factor the loop does not change";

class Finder {
 public:
  Finder(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live) : k_(k), t_(k.tokens), live_(live) {}

  FactorSites run() {
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& e = k_.elements[i];
      if (e.kind != ElementKind::LoopHeader || !e.is_for || e.function < 0) continue;
      if (live_ && !live_(e.tokens.first)) continue;
      FactorSite site;
      std::string why;
      bool has_sum = false;
      const std::string where = "line " + std::to_string(t_[e.tokens.first].line) + ": ";
      if (read_site(i, site, why, has_sum)) out_.sites.push_back(std::move(site));
      else if (has_sum && why == kNothingToMove) out_.nothing_to_move.push_back(where + why);
      else if (has_sum) out_.refusals.push_back(where + why);
    }
    return std::move(out_);
  }

 private:
  const grammar::ParsedKernel& k_;
  const std::vector<grammar::Token>& t_;
  std::function<bool(std::size_t)> live_;
  FactorSites out_;

  struct Statement {
    std::size_t element;
    std::optional<Expr> expr;  // statements only
    std::set<std::string> assigns;
    bool top = false;  // in the loop body's own block, not under an if inside it
  };

  int line_of(std::size_t element) const { return t_[next_code(t_, k_.elements[element].tokens.first)].line; }

  // The declaration of `name` seen from element `at`, and its element.
  std::optional<std::size_t> declaring_element(const std::string& name, std::size_t at) const {
    const Element& e = k_.elements[at];
    const int d = grammar::resolve(k_, name, e.block, e.pos);
    if (d < 0) return std::nullopt;
    const grammar::Declaration& decl = k_.declarations[static_cast<std::size_t>(d)];
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& x = k_.elements[i];
      if (x.pos == decl.pos && x.kind == ElementKind::Declaration && x.function == e.function) return i;
    }
    return std::nullopt;
  }

  // A local of the function declared `T name` or `T name[N]` (no pointer,
  // not __shared__ or static): T's words, with "[" appended for an array;
  // "" for anything else.
  std::string local_type(const std::string& name, std::size_t at) const {
    const auto d = declaring_element(name, at);
    if (!d) return "";
    const Element& x = k_.elements[*d];
    std::string type;
    bool in_type = true;
    for (std::size_t t = x.tokens.first; t <= x.tokens.last; ++t) {
      if (t_[t].kind == TokenKind::Comment) continue;
      if (t_[t].is("__shared__") || t_[t].is("static") || t_[t].is("extern")) return "";
      const std::size_t n = next_code(t_, t + 1);
      const bool declarator = t_[t].kind == TokenKind::Identifier && n <= x.tokens.last &&
                              (t_[n].is("=") || t_[n].is("[") || t_[n].is(",") || t_[n].is(";"));
      if (in_type && declarator) in_type = false;
      if (in_type) {
        if (t_[t].kind != TokenKind::Identifier) return "";  // `float* p`, `T<...>`
        if (!t_[t].is("const") && !t_[t].is("register") && !t_[t].is("volatile"))
          type += (type.empty() ? "" : " ") + t_[t].text;
        continue;
      }
      if (t_[t].is(name) && grammar::names_something(k_, t, x.tokens.first)) {
        const std::size_t p = prev_code(t_, t, x.tokens.first);
        if (t_[p].is("*") || t_[p].is("&")) return "";
        return type + (t_[n].is("[") ? "[" : "");
      }
    }
    return "";
  }

  // The type of a sum's target: the local's (an array's element type), or
  // a component's of a float or double vector (`xx.x` of a float3).
  std::string sum_type(const Expr& target, const std::string& root, std::size_t at) const {
    if (root.empty()) return "";
    std::string type = local_type(root, at);
    if (!type.empty() && type.back() == '[') type.pop_back();
    if (target.kind == ExprKind::Member && target.children[0].kind == ExprKind::Name) {
      for (const char* v : {"float2", "float3", "float4"})
        if (type == v) return "float";
      for (const char* v : {"double2", "double3", "double4"})
        if (type == v) return "double";
      return "";
    }
    return type;
  }

  // A factor the loop does not change: nothing it names is assigned in the
  // body, it calls nothing, and it reads memory only from local arrays.
  bool invariant(const Expr& e, std::size_t at, const std::set<std::string>& assigned) const {
    if (has_call(e)) return false;
    for (const std::string& n : names_in(e))
      if (assigned.count(n)) return false;
    return reads_only_locals(e, at);
  }
  bool reads_only_locals(const Expr& e, std::size_t at) const {
    if (e.kind == ExprKind::Unary && (e.text == "*" || e.text == "&")) return false;
    if (e.kind == ExprKind::Index) {
      const Expr& base = e.children[0];
      if (base.kind != ExprKind::Name) return false;
      const std::string type = local_type(base.text, at);
      if (type.empty() || type.back() != '[') return false;
    }
    if (is_assignment(e)) return false;
    return std::all_of(e.children.begin(), e.children.end(), [&](const Expr& c) { return reads_only_locals(c, at); });
  }

  std::string text(const Expr& e) const {
    const std::string s = expression_text(t_, e);
    const bool primary = e.kind == ExprKind::Name || e.kind == ExprKind::Literal || e.kind == ExprKind::Index ||
                         e.kind == ExprKind::Member || e.kind == ExprKind::Call;
    return primary ? s : "(" + s + ")";
  }

  bool read_site(std::size_t header, FactorSite& site, std::string& why, bool& has_sum) {
    const Element& h = k_.elements[header];
    const std::size_t close = body_close(k_, header);
    if (close == 0) return false;  // no braces: neither a site nor a refusal
    std::size_t open = header + 1;
    while (k_.elements[open].kind == ElementKind::Comment) ++open;
    site.function = h.function;
    site.loop = header;
    site.body_close = close;

    std::set<std::string> assigned;
    {
      const std::size_t lp = next_code(t_, h.tokens.first + 1);
      const auto parts = split(t_, lp + 1, closing(t_, lp) - 1, ";");
      for (const auto& [first, last] : parts)
        if (first <= last)
          for (std::size_t t = first; t <= last; ++t)
            if (t_[t].kind == TokenKind::Identifier) {
              // The header's assignments and steps: what it declares or names before `=`, `++`, `+=`.
              const std::size_t n = next_code(t_, t + 1);
              if (n <= last && (t_[n].is("=") || t_[n].is("++") || t_[n].is("--") || t_[n].is("+=") || t_[n].is("-=")))
                assigned.insert(t_[t].text);
              if (t > first && (t_[prev_code(t_, t, first)].is("++") || t_[prev_code(t_, t, first)].is("--")))
                assigned.insert(t_[t].text);
            }
    }

    std::vector<Statement> body;
    std::string trouble;
    const int body_block = k_.elements[open].block_after;
    for (std::size_t i = open + 1; i < close; ++i) {
      const Element& e = k_.elements[i];
      if (e.kind == ElementKind::Comment || e.kind == ElementKind::Pragma) continue;
      // An if or else inside the body, with its braces: their statements
      // count for what the body assigns; sums are read at the top only.
      if (e.kind == ElementKind::IfHeader || e.kind == ElementKind::ElseHeader || e.kind == ElementKind::BlockOpen ||
          e.kind == ElementKind::BlockClose) {
        if (e.kind == ElementKind::IfHeader && e.condition) {
          if (const auto c = parse_expression(t_, e.condition->first, e.condition->last)) {
            Statement s{i, std::nullopt, {}, false};
            assigned_names(*c, s.assigns);
            for (const std::string& n : s.assigns) assigned.insert(n);
            body.push_back(std::move(s));
          } else if (trouble.empty()) {
            trouble = "line " + std::to_string(line_of(i)) + " is a condition gi cannot read";
          }
        }
        continue;
      }
      Statement s{i, std::nullopt, {}, e.block == body_block && !e.braceless_body};
      if (e.kind == ElementKind::Declaration) {
        for (const std::string& n : e.declares) s.assigns.insert(n);
        for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
          if (t_[t].is("(") && t > e.tokens.first && t_[t - 1].kind == TokenKind::Identifier &&
              !is_pure_math_function(t_[t - 1].text))
            for (std::size_t u = t; u <= e.tokens.last; ++u)
              if (t_[u].kind == TokenKind::Identifier) s.assigns.insert(t_[u].text);
      } else if (e.kind == ElementKind::Statement) {
        const std::string& word = t_[next_code(t_, e.tokens.first)].text;
        if (word == "return" || word == "goto") {
          if (trouble.empty()) trouble = "line " + std::to_string(line_of(i)) + " leaves the loop with " + word;
        } else if (word != "break" && word != "continue" && word != ";") {
          s.expr = statement_expression(k_, e);
          if (!s.expr) {
            if (trouble.empty()) trouble = "line " + std::to_string(line_of(i)) + " is a statement gi cannot read";
          } else {
            assigned_names(*s.expr, s.assigns);
          }
        }
      } else if (e.kind == ElementKind::LoopHeader) {
        return false;  // an outer loop of a nest: its innermost loop is the site, if any
      } else if (trouble.empty()) {
        trouble = "line " + std::to_string(line_of(i)) + " is no statement, declaration, if or else";
      }
      for (const std::string& n : s.assigns) assigned.insert(n);
      body.push_back(std::move(s));
    }

    // The accumulations: `ACC += ...` / `ACC -= ...` of a float or double local.
    std::map<std::string, int> root_statements;  // accumulator root -> accumulations naming it
    std::vector<std::size_t> sums;                // indices into body
    for (std::size_t b = 0; b < body.size(); ++b) {
      const auto& x = body[b].expr;
      if (!body[b].top || !x || x->kind != ExprKind::Binary || (x->text != "+=" && x->text != "-=")) continue;
      const std::string root = root_name(x->children[0]);
      const std::string type = sum_type(x->children[0], root, body[b].element);
      if (type != "float" && type != "double") continue;
      has_sum = true;
      ++root_statements[root];
      sums.push_back(b);
    }
    if (!has_sum) return false;
    if (!trouble.empty()) {
      why = trouble;
      return false;
    }

    std::map<std::string, std::set<std::size_t>> weights_used;  // weight -> the definitions the rewrite reads
    std::map<std::pair<std::string, std::string>, std::size_t> partial_of;
    for (std::size_t b : sums) {
      const Statement& s = body[b];
      const Expr& x = *s.expr;
      const std::string root = root_name(x.children[0]);
      const std::string where = "line " + std::to_string(line_of(s.element)) + ": ";
      // ACC is named by its accumulations only, once each, at an index the body does not change.
      int named = 0;
      for (const Statement& o : body)
        for (std::size_t t = k_.elements[o.element].tokens.first; t <= k_.elements[o.element].tokens.last; ++t)
          if (t_[t].is(root) && grammar::names_something(k_, t, k_.elements[o.element].tokens.first)) ++named;
      if (named != root_statements[root]) {
        why = where + root + " is read or written elsewhere in the loop";
        return false;
      }
      for (const std::string& n : names_in(x.children[0]))
        if (n != root && assigned.count(n)) {
          why = where + "the index of " + expression_text(t_, x.children[0]) + " changes in the loop";
          return false;
        }
      const std::string type = sum_type(x.children[0], root, s.element);

      // The factors, weights read through their one definition.
      std::vector<Factor> factors;
      flatten(x.children[1], false, factors);
      std::map<std::string, std::size_t> weights_here;  // weight -> the definition's element this sum reads
      for (int round = 0; round < 4; ++round) {
        std::vector<Factor> next;
        bool expanded = false;
        for (const Factor& f : factors) {
          std::optional<std::size_t> def;
          if (!f.divisor && f.e->kind == ExprKind::Name) def = weight_definition(body, b, f.e->text);
          if (!def) {
            next.push_back(f);
            continue;
          }
          flatten(body[*def].expr->children[1], false, next);
          weights_here[f.e->text] = body[*def].element;
          expanded = true;
        }
        factors = std::move(next);
        if (!expanded) break;
      }
      // Each part a product led by a factor that is no divisor ("1" where
      // all are divisors): "xBasis[a] * controlPoint.x", "basis[b] * basis[c] / spacingX".
      std::string varying, fixed;
      bool varying_product = false, fixed_product = false;
      int fixed_factors = 0;
      for (const Factor& f : factors) {
        const bool is_fixed = invariant(*f.e, s.element, assigned);
        std::string& part = is_fixed ? fixed : varying;
        bool& has_product = is_fixed ? fixed_product : varying_product;
        if (is_fixed) {
          ++fixed_factors;
          for (const std::string& n : names_in(*f.e)) site.guarded_names.insert(n);
        }
        if (!f.divisor && !has_product) {
          part = text(*f.e) + part;  // the first product factor leads
          has_product = true;
          continue;
        }
        part += std::string(f.divisor ? " / " : " * ") + text(*f.e);
      }
      if (fixed.empty() || varying.empty()) continue;  // nothing to move out, or nothing left to sum: stays as it is
      if (!varying_product) varying = (type == "float" ? "1.0f" : "1.0") + varying;
      // One parenthesised product: sums that share it (a Jacobian's column)
      // share its multiplications after the loop.
      // Divisions alone stay divisions: " / h".
      if (fixed_product) fixed = fixed_factors > 1 ? " * (" + fixed + ")" : " * " + fixed;
      for (const auto& [w, def] : weights_here) {
        site.protected_elements.insert(def);
        weights_used[w].insert(def);
      }
      const auto key = std::make_pair(type, varying);
      if (!partial_of.count(key)) {
        partial_of[key] = site.partials.size();
        site.partials.push_back(FactorPartial{type, varying});
      }
      site.sums.push_back(FactoredSum{s.element, expression_text(t_, x.children[0]), x.text, type, varying, fixed, partial_of[key]});
      site.protected_elements.insert(s.element);
      site.guarded_names.insert(root);
    }
    if (site.sums.empty()) {
      why = kNothingToMove;
      return false;
    }
    for (const auto& [w, defs] : weights_used) {
      site.guarded_names.insert(w);
      if (only_in(w, header, defs, site)) site.dead_definitions.insert(defs.begin(), defs.end());
    }
    for (const Statement& s : body)
      if (site.protected_elements.count(s.element) && s.expr)
        for (const std::string& n : names_in(*s.expr)) site.guarded_names.insert(n);
    return true;
  }

  // Whether the function names `w` only in its declarations, in `elements`
  // and in the site's factored sums (which no longer name it once rewritten).
  bool only_in(const std::string& w, std::size_t at, const std::set<std::size_t>& elements, const FactorSite& site) const {
    const int function = k_.elements[at].function;
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& e = k_.elements[i];
      if (e.function != function || e.kind == ElementKind::Declaration || elements.count(i)) continue;
      if (std::any_of(site.sums.begin(), site.sums.end(), [&](const FactoredSum& s) { return s.statement == i; })) continue;
      for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
        if (t_[t].is(w) && grammar::names_something(k_, t, e.tokens.first)) return false;
    }
    return true;
  }

  // The statement `W = ...;` that sets the weight W last before body[use],
  // when nothing assigned between the two changes its names.
  std::optional<std::size_t> weight_definition(const std::vector<Statement>& body, std::size_t use,
                                               const std::string& w) const {
    // The assignment that reaches the sum: the last one before it (a
    // weight set anew for each group of sums, as the library's kernels do).
    std::optional<std::size_t> def;
    for (std::size_t b = 0; b < use; ++b)
      if (body[b].assigns.count(w)) def = b;
    if (!def || !body[*def].top) return std::nullopt;
    const auto& x = body[*def].expr;
    if (!x || x->kind != ExprKind::Binary || x->text != "=" || !x->children[0].is_name(w)) return std::nullopt;
    // Read at the sum instead: a load could see a store made in between, so
    // only weights of registers and local arrays are read through.
    if (has_call(x->children[1]) || !reads_only_locals(x->children[1], body[*def].element)) return std::nullopt;
    const std::vector<std::string> names = names_in(x->children[1]);
    // `h = h * 0.5f` reads the value before it: not one the sum could read.
    if (std::find(names.begin(), names.end(), w) != names.end()) return std::nullopt;
    for (std::size_t b = *def + 1; b < use; ++b)
      for (const std::string& n : names)
        if (body[b].assigns.count(n)) return std::nullopt;
    return def;
  }
};

}  // namespace

FactorSites find_factor_sites(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live) {
  return Finder(k, live).run();
}

}  // namespace gi::analysis

#include "analysis/uniformity.hpp"

#include <map>

#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::Token;
using grammar::TokenKind;

std::size_t next_code(const std::vector<Token>& t, std::size_t i, std::size_t last) {
  while (i <= last && i < t.size() && t[i].kind == TokenKind::Comment) ++i;
  return i;
}

// The tokens strictly between the '(' at or after `from` and its match.
std::optional<std::pair<std::size_t, std::size_t>> parenthesised(const std::vector<Token>& t, std::size_t from,
                                                                 std::size_t last) {
  std::size_t open = from;
  while (open <= last && !t[open].is("(")) ++open;
  if (open > last) return std::nullopt;
  int depth = 0;
  for (std::size_t i = open; i <= last; ++i) {
    if (t[i].is("(")) ++depth;
    if (t[i].is(")") && --depth == 0) return std::make_pair(open + 1, i - 1);
  }
  return std::nullopt;
}

Expr comma(Expr a, Expr b) {
  Expr e;
  e.kind = ExprKind::Binary;
  e.text = ",";
  e.first = a.first;
  e.last = b.last;
  e.children = {std::move(a), std::move(b)};
  return e;
}

bool is_loop_exit(const Token& t) { return t.is("break") || t.is("continue") || t.is("return") || t.is("goto"); }

}  // namespace

bool is_pure_math_function(const std::string& name) {
  static const std::set<std::string> pure = {
      "sqrtf", "sqrt", "rsqrtf", "rsqrt", "cbrtf", "expf", "exp", "exp2f", "exp10f", "expm1f", "logf", "log",
      "log2f", "log10f", "log1pf", "powf", "pow", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f",
      "sinhf", "coshf", "tanhf", "fabsf", "fabs", "abs", "llabs", "floorf", "floor", "ceilf", "ceil", "roundf",
      "round", "truncf", "trunc", "rintf", "lrintf", "llrintf", "nearbyintf", "fminf", "fmaxf", "fmin", "fmax",
      "min", "max", "umin", "umax", "fmaf", "fma", "copysignf", "hypotf", "erff", "erfcf", "fmodf", "remainderf",
      "__expf", "__logf", "__log2f", "__powf", "__sinf", "__cosf", "__tanf", "__fdividef", "__frcp_rn",
      "__fsqrt_rn", "__saturatef", "__int_as_float", "__float_as_int", "__uint_as_float", "__float_as_uint",
      "__float2int_rn", "__float2int_rz", "__float2int_rd", "__float2int_ru", "__float2uint_rn", "__int2float_rn",
      "__uint2float_rn", "__double2float_rn", "__popc", "__clz", "__ffs", "__brev", "__mul24", "__umul24",
      "make_float2", "make_float3", "make_float4", "make_int2", "make_int3", "make_int4", "make_uint2",
      "make_uint3", "make_uint4", "make_double2", "sizeof"};
  return pure.count(name) > 0;
}

Uniformity::Uniformity(const grammar::ParsedKernel& k, int function, std::function<bool(std::size_t)> live)
    : k_(k), function_(function), live_(std::move(live)) {
  if (!live_) live_ = [](std::size_t) { return true; };
  collect_controls();
  collect_definitions();
  solve();
}

int Uniformity::resolve(const std::string& name, std::size_t element) const {
  const Element& e = k_.elements[element];
  // A for header's own declaration (for (int i = ...)) has the header's
  // position, in a block of the loop's own.
  if (e.kind == ElementKind::LoopHeader)
    for (std::size_t d = 0; d < k_.declarations.size(); ++d)
      if (k_.declarations[d].pos == e.pos && k_.declarations[d].name == name) return static_cast<int>(d);
  const int pos = e.kind == ElementKind::Declaration ? e.pos + 1 : e.pos;
  return grammar::resolve(k_, name, e.block, pos);
}

void Uniformity::collect_controls() {
  const std::size_t n = k_.elements.size();
  controls_.assign(n, {});
  condition_.assign(n, std::nullopt);
  leaves_early_.assign(n, false);
  const auto& t = k_.tokens;
  std::map<int, std::vector<std::size_t>> block_controls;
  std::vector<std::size_t> pending;            // headers whose body is the next element (no braces)
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t awaiting_brace = kNone;          // a header whose body opens with the next `{`
  for (std::size_t i = 0; i < n; ++i) {
    const Element& e = k_.elements[i];
    if (e.function != function_ || !live_(e.tokens.first)) continue;
    const bool header = e.kind == ElementKind::IfHeader || e.kind == ElementKind::ElseHeader ||
                        e.kind == ElementKind::LoopHeader || e.kind == ElementKind::SwitchHeader;
    std::vector<std::size_t> mine = e.braceless_body ? pending : std::vector<std::size_t>{};
    const auto& outer = block_controls[e.block];
    mine.insert(mine.end(), outer.begin(), outer.end());
    controls_[i] = mine;
    // `if (a) if (b) x;`: the inner header's body is controlled by both.
    if (!(e.braceless_body && header && e.awaits_braceless_body)) pending.clear();
    if (e.braceless_body)  // a brace-less loop body that leaves early
      for (std::size_t h : mine)
        if (k_.elements[h].kind == ElementKind::LoopHeader)
          for (std::size_t x = e.tokens.first; x <= e.tokens.last; ++x)
            if (is_loop_exit(t[x])) leaves_early_[h] = true;
    if (header) {
      condition_[i] = header_condition(i);
      if (e.awaits_braceless_body) {
        pending = mine;
        pending.insert(pending.begin(), i);
      } else {
        awaiting_brace = i;
      }
    } else if (e.kind == ElementKind::BlockOpen) {
      std::vector<std::size_t> inner = outer;
      if (awaiting_brace != kNone) {
        const std::size_t h = awaiting_brace;
        inner = controls_[h];
        inner.insert(inner.begin(), h);
        // A loop left early inside its body does not run the same number of times everywhere.
        if (k_.elements[h].kind == ElementKind::LoopHeader) {
          int depth = 0;
          for (std::size_t x = e.tokens.first; x < t.size(); ++x) {
            if (t[x].is("{")) ++depth;
            if (t[x].is("}") && --depth == 0) break;
            if (is_loop_exit(t[x]) && live_(x)) leaves_early_[h] = true;
          }
        }
      }
      block_controls[e.block_after] = inner;
      awaiting_brace = kNone;
    } else if (e.kind != ElementKind::Comment) {
      awaiting_brace = kNone;
    }
  }
}

std::optional<Expr> Uniformity::header_condition(std::size_t i) const {
  const Element& e = k_.elements[i];
  const auto& t = k_.tokens;
  const std::size_t word = next_code(t, e.tokens.first, e.tokens.last);
  std::string why;
  if (e.kind == ElementKind::IfHeader && e.condition)
    return parse_expression(t, e.condition->first + 1, e.condition->last - 1, &why);
  if (e.kind == ElementKind::ElseHeader) {
    // Every if of the chain this else ends decides it.
    std::optional<Expr> all;
    for (std::size_t j = i; j-- > 0;) {
      const Element& p = k_.elements[j];
      if (p.function != function_) break;
      if (p.block != e.block || !live_(p.tokens.first)) continue;
      if (p.kind == ElementKind::IfHeader && p.condition) {
        auto c = parse_expression(t, p.condition->first + 1, p.condition->last - 1, &why);
        if (!c) return std::nullopt;
        all = all ? comma(std::move(*all), std::move(*c)) : std::move(*c);
      } else if (!(p.kind == ElementKind::ElseHeader || p.kind == ElementKind::BlockOpen ||
                   p.kind == ElementKind::BlockClose || p.kind == ElementKind::Comment || p.braceless_body)) {
        break;
      }
    }
    return all;
  }
  if (word >= t.size()) return std::nullopt;
  const auto inner = parenthesised(t, word, e.tokens.last);
  if (!inner) return std::nullopt;  // a do-while's condition comes after its body: not uniform
  if (e.kind == ElementKind::LoopHeader && t[word].is("for")) {
    const auto parts = split(t, inner->first, inner->second, ";");
    if (parts.size() != 3 || parts[1].first > parts[1].second) return std::nullopt;  // for (;;) leaves by break
    return parse_expression(t, parts[1].first, parts[1].second, &why);
  }
  if ((e.kind == ElementKind::LoopHeader && t[word].is("while")) || e.kind == ElementKind::SwitchHeader)
    return parse_expression(t, inner->first, inner->second, &why);
  return std::nullopt;
}

void Uniformity::add_definitions(const Expr& e, std::size_t element) {
  // The variable an lvalue names: x, x.f, x.f.g; not x[i] or *p, which
  // name memory (a local array is not uniform anyway).
  auto root = [](const Expr* x) {
    while (x->kind == ExprKind::Member && x->text == ".") x = &x->children[0];
    return x;
  };
  if (is_assignment(e)) {
    const Expr* target = root(&e.children[0]);
    if (target->kind == ExprKind::Name) {
      const int d = resolve(target->text, element);
      if (d >= 0) {
        assigned_.insert(d);
        if (e.kind == ExprKind::Binary && e.text == "=") {
          definitions_.push_back({d, e.children[1], element});
        } else {
          definitions_.push_back({d, e, element});  // compound: the old value and the operand
        }
      }
    }
  }
  if (e.kind == ExprKind::Unary && e.text == "&") {
    const Expr* target = root(&e.children[0]);
    if (target->kind == ExprKind::Name) {
      const int d = resolve(target->text, element);
      if (d >= 0 && k_.declarations[static_cast<std::size_t>(d)].block != 0) {
        assigned_.insert(d);
        definitions_.push_back({d, std::nullopt, element});  // whoever holds the address may write it
      }
    }
  }
  for (const Expr& c : e.children) add_definitions(c, element);
}

void Uniformity::collect_definitions() {
  const auto& t = k_.tokens;
  for (std::size_t i = 0; i < k_.elements.size(); ++i) {
    const Element& e = k_.elements[i];
    if (e.function != function_ || !live_(e.tokens.first)) continue;
    auto unparsed = [&](const std::string& why) {
      unparsed_.push_back("line " + std::to_string(t[e.tokens.first].line) + ": " + why);
      // Whatever it may assign is not uniform: a name before an assignment
      // operator, next to ++ or --, or whose address is taken.
      auto assigns = [&](const Token& x) {
        return x.is("=") || x.is("+=") || x.is("-=") || x.is("*=") || x.is("/=") || x.is("%=") || x.is("&=") ||
               x.is("|=") || x.is("^=") || x.is("<<=") || x.is(">>=") || x.is("++") || x.is("--");
      };
      for (std::size_t x = e.tokens.first; x <= e.tokens.last; ++x) {
        if (!grammar::names_something(k_, x, e.tokens.first)) continue;
        const std::size_t after = next_code(t, x + 1, e.tokens.last);
        const bool written = (after <= e.tokens.last && assigns(t[after])) ||
                             (x > e.tokens.first && (assigns(t[x - 1]) || t[x - 1].is("&")));
        const int d = written ? resolve(t[x].text, i) : -1;
        if (d >= 0 && k_.declarations[static_cast<std::size_t>(d)].block != 0) {
          assigned_.insert(d);
          definitions_.push_back({d, std::nullopt, i});
        }
      }
    };
    if (e.kind == ElementKind::Declaration) {
      // Each declared name: `= initializer` up to the next top-level ',' or
      // ';'; an array (or anything else after the name) is per-thread data.
      const bool shared = [&] {
        for (std::size_t x = e.tokens.first; x <= e.tokens.last; ++x)
          if (t[x].is("__shared__") || t[x].is("extern")) return true;
        return false;
      }();
      for (const std::string& name : e.declares) {
        const int d = resolve(name, i);
        if (d < 0) continue;
        std::size_t at = e.tokens.first;
        while (at <= e.tokens.last && !(t[at].is(name) && grammar::names_something(k_, at, e.tokens.first))) ++at;
        const std::size_t after = next_code(t, at + 1, e.tokens.last);
        if (shared || at > e.tokens.last || after > e.tokens.last || t[after].is("[") || t[after].is("(")) {
          definitions_.push_back({d, std::nullopt, i});
          continue;
        }
        if (!t[after].is("=")) continue;  // declared without a value
        const auto parts = split(t, after + 1, e.tokens.last, ",");
        std::size_t end = parts.front().second;
        if (end >= e.tokens.last && t[e.tokens.last].is(";")) end = e.tokens.last - 1;
        std::string why;
        if (auto value = parse_expression(t, after + 1, end, &why)) {
          definitions_.push_back({d, std::move(*value), i});
        } else {
          definitions_.push_back({d, std::nullopt, i});
          unparsed_.push_back("line " + std::to_string(t[after].line) + ": " + why);
        }
      }
    } else if (e.kind == ElementKind::Statement) {
      std::size_t first = next_code(t, e.tokens.first, e.tokens.last), last = e.tokens.last;
      while (last > first && (t[last].is(";") || t[last].kind == TokenKind::Comment)) --last;
      if (first > last || t[first].is(";")) continue;
      if (t[first].is("return")) {
        if (first == last) continue;
        ++first;
      }
      if (t[first].is("break") || t[first].is("continue") || t[first].is("goto")) continue;
      std::string why;
      if (auto x = parse_expression(t, first, last, &why)) {
        add_definitions(*x, i);
      } else {
        unparsed(why);
      }
    } else if (e.kind == ElementKind::LoopHeader) {
      const std::size_t word = next_code(t, e.tokens.first, e.tokens.last);
      if (word >= t.size() || !t[word].is("for")) continue;
      const auto inner = parenthesised(t, word, e.tokens.last);
      if (!inner) continue;
      const auto parts = split(t, inner->first, inner->second, ";");
      if (parts.size() != 3) {
        unparsed("a for header without three parts (a range-based for?)");
        continue;
      }
      // The first part: a declaration `int i = a` (its names have the
      // header's position) or an expression `i = a`.
      const auto [init_first, init_last] = parts[0];
      bool declares = false;
      for (std::size_t d = 0; d < k_.declarations.size(); ++d) {
        if (k_.declarations[d].pos != e.pos || k_.declarations[d].block == e.block) continue;
        declares = true;
        const std::string& name = k_.declarations[d].name;
        std::size_t at = init_first;
        while (at <= init_last && !t[at].is(name)) ++at;
        const std::size_t eq = next_code(t, at + 1, init_last);
        std::string why;
        std::optional<Expr> value;
        if (eq <= init_last && t[eq].is("=")) {
          const auto values = split(t, eq + 1, init_last, ",");
          value = parse_expression(t, values.front().first, values.front().second, &why);
        }
        definitions_.push_back({static_cast<int>(d), std::move(value), i});
      }
      if (!declares && init_first <= init_last) {
        std::string why;
        if (auto x = parse_expression(t, init_first, init_last, &why)) add_definitions(*x, i);
        else unparsed(why);
      }
      // The step runs only while the condition holds: a variable it changes
      // is uniform only when the condition is too.
      const auto [step_first, step_last] = parts[2];
      if (step_first <= step_last) {
        std::string why;
        auto step = parse_expression(t, step_first, step_last, &why);
        if (!step) {
          unparsed(why);
          continue;
        }
        const std::size_t before = definitions_.size();
        add_definitions(*step, i);
        for (std::size_t x = before; x < definitions_.size(); ++x)
          if (definitions_[x].value) {
            if (condition_[i]) {
              definitions_[x].value = comma(*condition_[i], std::move(*definitions_[x].value));
            } else {
              definitions_[x].value.reset();
            }
          }
      }
    }
  }
}

void Uniformity::solve() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Definition& d : definitions_) {
      if (tainted_.count(d.variable)) continue;
      if (!d.value || why_not_under(*d.value, d.element, tainted_) || divergence_under(d.element, tainted_)) {
        tainted_.insert(d.variable);
        changed = true;
      }
    }
  }
}

std::optional<std::size_t> Uniformity::divergence(std::size_t element) const {
  return divergence_under(element, tainted_);
}

std::optional<std::size_t> Uniformity::divergence_under(std::size_t element, const std::set<int>& tainted) const {
  for (std::size_t h : controls_.at(element)) {
    if (!condition_[h] || why_not_under(*condition_[h], h, tainted)) return h;
    if (leaves_early_[h]) return h;
  }
  // A return some threads take ends them early: whatever comes after runs in the rest only.
  const auto& t = k_.tokens;
  for (std::size_t i = 0; i < element; ++i) {
    const Element& e = k_.elements[i];
    if (e.function != function_ || e.kind != ElementKind::Statement || !live_(e.tokens.first)) continue;
    const std::size_t word = next_code(t, e.tokens.first, e.tokens.last);
    if (word < t.size() && t[word].is("return") && divergence_under(i, tainted)) return i;
  }
  return std::nullopt;
}

std::optional<std::string> Uniformity::why_not(const Expr& e, std::size_t element) const {
  return why_not_under(e, element, tainted_);
}

std::optional<std::string> Uniformity::why_not_under(const Expr& e, std::size_t element, const std::set<int>& tainted) const {
  switch (e.kind) {
    case ExprKind::Literal:
      return std::nullopt;
    case ExprKind::Name: {
      if (e.text == "threadIdx") return "threadIdx";
      if (e.text == "blockIdx" || e.text == "blockDim" || e.text == "gridDim" || e.text == "warpSize")
        return std::nullopt;
      const int d = resolve(e.text, element);
      if (d < 0) return std::nullopt;  // a macro, enum or other constant the file does not declare here
      if (k_.declarations[static_cast<std::size_t>(d)].block == 0) return "file-level variable " + e.text;
      if (tainted.count(d)) return "'" + e.text + "', assigned a value that differs between threads";
      return std::nullopt;
    }
    case ExprKind::Index:
      return "a loaded value (" + expression_text(k_.tokens, e) + ")";
    case ExprKind::Unary:
      if (e.text == "*") return "a loaded value (" + expression_text(k_.tokens, e) + ")";
      if (e.text == "&") {
        const Expr& x = e.children[0];
        if (x.kind == ExprKind::Index) {  // an address, nothing loaded
          if (auto why = why_not_under(x.children[0], element, tainted)) return why;
          return why_not_under(x.children[1], element, tainted);
        }
        if (x.kind == ExprKind::Name) {
          const int d = resolve(x.text, element);
          if (d >= 0 && k_.declarations[static_cast<std::size_t>(d)].block != 0) return "the address of local " + x.text;
        }
      }
      break;
    case ExprKind::Call: {
      const std::string callee = e.callee();
      if (!is_pure_math_function(callee))
        return "a call of " + (callee.empty() ? expression_text(k_.tokens, e.children[0]) : callee);
      for (std::size_t i = 1; i < e.children.size(); ++i)
        if (auto why = why_not_under(e.children[i], element, tainted)) return why;
      return std::nullopt;
    }
    default:
      break;
  }
  for (const Expr& c : e.children)
    if (auto why = why_not_under(c, element, tainted)) return why;
  return std::nullopt;
}

}  // namespace gi::analysis

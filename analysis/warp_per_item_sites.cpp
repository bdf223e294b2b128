#include "analysis/warp_per_item_sites.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "analysis/expression.hpp"
#include "analysis/extremum_functions.hpp"
#include "analysis/extremum_record.hpp"
#include "analysis/global_index.hpp"
#include "analysis/loop_nest.hpp"
#include "analysis/token_ranges.hpp"
#include "analysis/uniformity.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::ParsedKernel;
using grammar::Token;
using grammar::TokenKind;

// How an element touches a variable. Whole: `x = e` (the old value is gone);
// Part: a field, an element or a compound update (read and written);
// Sum: `x += e` and its spellings, e without x; Extremum: `x = f(x, e)` or
// `x = f(e, x)`, f a maximum or minimum (analysis/extremum_functions.hpp).
enum class Use { Read, Whole, Part, Sum, Extremum };

struct Access {
  int variable = -1;  // declaration index
  Use use = Use::Read;
  std::size_t element = 0;
  std::size_t order = 0;  // evaluation order across the function
  std::string function;   // Extremum: f
};

// What one element does: the variables it touches, whether it writes
// memory, and what the analysis could not read (then no loop near it is a site).
struct ElementUses {
  std::vector<Access> accesses;
  bool memory = false;
  std::string trouble;
};

// A function of the file as a call sees it: whether it stays inside its
// own locals and pointer parameters, and for each parameter whether it is
// written through (1: only written, 2: also read), else 0.
struct CalleeSummary {
  std::string why_not;  // empty: callable
  std::vector<int> writes;
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Names whose use makes lanes of one group differ, or needs every thread of a warp or block.
std::optional<std::string> group_hazard(const std::string& name) {
  if (name == "threadIdx" || name == "warpSize") return name;
  if (name == "__shared__") return "shared memory";
  for (const char* p : {"__sync", "__shfl", "__ballot", "__any", "__all", "__activemask", "__match", "__reduce"})
    if (starts_with(name, p)) return "a barrier or warp collective (" + name + ")";
  return std::nullopt;
}

// The component type of a CUDA vector type (float4: float), or "".
std::string component_type(const std::string& t) {
  for (const char* base : {"float", "double", "int", "uint", "longlong", "ulonglong"}) {
    const std::string b = base;
    if (t.size() == b.size() + 1 && t.rfind(b, 0) == 0 && t.back() >= '1' && t.back() <= '4')
      return b == "uint" ? "unsigned int" : b == "longlong" ? "long long" : b == "ulonglong" ? "unsigned long long" : b;
  }
  return "";
}

bool shuffled_type(const std::string& t) {
  static const std::set<std::string> types = {"int", "unsigned", "unsigned int", "long long", "long long int",
                                              "unsigned long long", "unsigned long long int", "float", "double"};
  return types.count(t) > 0;
}

class FunctionLoops {
 public:
  FunctionLoops(const ParsedKernel& k, int function, const std::function<bool(std::size_t)>& live,
                const std::map<std::string, std::string>& extremum_functions, WarpPerItemSites& out)
      : k_(k), t_(k.tokens), f_(k.functions[static_cast<std::size_t>(function)]), function_(function), live_(live),
        extremum_functions_(extremum_functions), out_(out) {}

  void run() {
    const Element& header = k_.elements[static_cast<std::size_t>(f_.header_element)];
    open_ = header.tokens.last;
    if (!t_[open_].is("{")) return;
    close_ = closing(t_, open_);
    for (std::size_t i = 0; i < k_.elements.size(); ++i)
      if (mine(i)) elements_.push_back(i);
    uses_.resize(k_.elements.size());
    for (std::size_t i : elements_) collect(i);
    const std::string unfit = kernel_unfit();
    for (std::size_t i : elements_) {
      const Element& e = k_.elements[i];
      if (e.kind != ElementKind::LoopHeader || !(e.is_for || is_while(i))) continue;
      const std::string where = "line " + std::to_string(t_[e.tokens.first].line) + ": ";
      if (!unfit.empty()) {
        out_.refusals.push_back(where + unfit);
        continue;
      }
      WarpPerItemSite site;
      if (auto why = refuse(i, site)) {
        out_.refusals.push_back(where + *why);
        continue;
      }
      out_.sites.push_back(std::move(site));
    }
  }

 private:
  bool mine(std::size_t i) const {
    const Element& e = k_.elements[i];
    return e.function == function_ && e.tokens.first > open_ && e.tokens.first < close_ && live_(e.tokens.first) &&
           e.kind != ElementKind::Comment;
  }
  int line_of(std::size_t element) const { return t_[next_code(t_, k_.elements[element].tokens.first)].line; }
  std::string line(std::size_t element) const { return "line " + std::to_string(line_of(element)); }

  bool encloses(int outer, int inner) const {
    for (int b = inner; b >= 0; b = k_.blocks[static_cast<std::size_t>(b)].parent)
      if (b == outer) return true;
    return false;
  }

  // The declaration `name` means at element `element` (a for header's own
  // declaration included), or -1 for names the file does not declare.
  int resolve(const std::string& name, std::size_t element) const {
    const Element& e = k_.elements[element];
    if (e.kind == ElementKind::LoopHeader)
      for (std::size_t d = 0; d < k_.declarations.size(); ++d)
        if (k_.declarations[d].pos == e.pos && k_.declarations[d].name == name) return static_cast<int>(d);
    return grammar::resolve(k_, name, e.block, e.kind == ElementKind::Declaration ? e.pos + 1 : e.pos);
  }
  // A local or parameter of this function (not the file's).
  bool local(int d) const { return d >= 0 && encloses(f_.block, k_.declarations[static_cast<std::size_t>(d)].block); }

  // The element declaring `d` and the token of its name there.
  std::optional<std::pair<std::size_t, std::size_t>> declarator(int d) const {
    const grammar::Declaration& decl = k_.declarations[static_cast<std::size_t>(d)];
    for (std::size_t i : elements_) {
      const Element& e = k_.elements[i];
      if (e.pos != decl.pos || (e.kind != ElementKind::Declaration && e.kind != ElementKind::LoopHeader)) continue;
      for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
        if (t_[t].is(decl.name) && grammar::names_something(k_, t, e.tokens.first)) return std::make_pair(i, t);
    }
    return std::nullopt;
  }
  bool is_param(int d, bool* pointer = nullptr) const {
    const grammar::Declaration& decl = k_.declarations[static_cast<std::size_t>(d)];
    if (decl.block != f_.block) return false;
    for (const grammar::Param& p : f_.params)
      if (p.name == decl.name) {
        if (pointer) *pointer = p.pointer;
        return !declarator(d);
      }
    return false;
  }
  // A local array (`float b[4];`): its elements are registers or local memory, not the GPU's global memory.
  bool local_array(int d) const {
    if (!local(d) || is_param(d)) return false;
    const auto at = declarator(d);
    return at && t_[next_code(t_, at->second + 1)].is("[");
  }
  // The declared type of a scalar local, as written without qualifiers ("unsigned int").
  std::string type_of(int d) const {
    const auto at = declarator(d);
    if (!at) return "";
    const Element& e = k_.elements[at->first];
    std::size_t from = e.tokens.first;
    if (e.kind == ElementKind::LoopHeader) from = next_code(t_, next_code(t_, from + 1) + 1);  // after `for (`
    std::string type;
    for (std::size_t t = from; t < at->second; ++t) {
      if (t_[t].kind == TokenKind::Comment || t_[t].is("const") || t_[t].is("register") || t_[t].is("volatile")) continue;
      if (t_[t].kind != TokenKind::Identifier) {
        if (t_[t].is(",")) break;  // a later declarator of `int a, b;`: the type is the first words
        return "";
      }
      type += (type.empty() ? "" : " ") + t_[t].text;
    }
    return type;
  }

  // ---- what each element touches ----

  void add(std::size_t element, int variable, Use use) {
    if (variable < 0) return;
    uses_[element].accesses.push_back(Access{variable, use, element, element * 4096 + uses_[element].accesses.size(), ""});
  }
  void trouble(std::size_t element, const std::string& why) {
    if (uses_[element].trouble.empty()) uses_[element].trouble = why;
  }

  void reads(const Expr& e, std::size_t element) {
    switch (e.kind) {
      case ExprKind::Name: {
        const int d = resolve(e.text, element);
        if (local(d)) add(element, d, Use::Read);
        return;
      }
      case ExprKind::Call: call(e, element); return;
      case ExprKind::Unary:
        if (e.text == "++" || e.text == "--" || e.text == "post++" || e.text == "post--") {
          assigns(e.children[0], Use::Part, element);
          return;
        }
        break;
      case ExprKind::Binary:
        if (is_assignment(e)) {
          reads(e.children[1], element);
          assigns(e.children[0], e.text == "=" ? Use::Whole : Use::Part, element);
          return;
        }
        break;
      default: break;
    }
    for (const Expr& c : e.children) reads(c, element);
  }

  // `lhs` is assigned (whole or in part).
  void assigns(const Expr& lhs, Use use, std::size_t element) {
    const Expr* x = &lhs;
    while (x->kind == ExprKind::Member && x->text == ".") {
      x = &x->children[0];
      use = Use::Part;
    }
    if (x->kind == ExprKind::Name) {
      const int d = resolve(x->text, element);
      if (local(d)) return add(element, d, use);
      uses_[element].memory = true;  // a file-level variable
      return;
    }
    if (x->kind == ExprKind::Index) {
      reads(x->children[1], element);
      const Expr* base = &x->children[0];
      while ((base->kind == ExprKind::Member && base->text == ".") || base->kind == ExprKind::Index) {
        if (base->kind == ExprKind::Index) reads(base->children[1], element);
        base = &base->children[0];
      }
      if (base->kind == ExprKind::Name) {
        const int d = resolve(base->text, element);
        if (local_array(d)) return add(element, d, Use::Part);
      }
      reads(*base, element);
      uses_[element].memory = true;
      return;
    }
    reads(*x, element);  // *p, p->f: memory
    uses_[element].memory = true;
  }

  void call(const Expr& e, std::size_t element) {
    const std::string callee = e.callee();
    if (callee.empty()) return trouble(element, "a call through an expression");
    const std::vector<Expr> args(e.children.begin() + 1, e.children.end());
    // A texture fetch or a read-only load reads memory and writes none.
    if (is_pure_math_function(callee) || starts_with(callee, "tex1Dfetch") || callee == "__ldg") {
      for (const Expr& a : args) reads(a, element);
      return;
    }
    if (starts_with(callee, "atomic")) {
      for (const Expr& a : args) reads(a, element);
      uses_[element].memory = true;
      return;
    }
    const CalleeSummary* s = summary(callee);
    if (!s) return trouble(element, "a call of " + callee + ", which gi cannot see into");
    if (!s->why_not.empty()) return trouble(element, "a call of " + callee + ", which " + s->why_not);
    if (s->writes.size() != args.size()) return trouble(element, "a call of " + callee + " with another number of arguments");
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (s->writes[i] == 0) {
        reads(args[i], element);
        continue;
      }
      const int d = args[i].kind == ExprKind::Name ? resolve(args[i].text, element) : -1;
      if (local_array(d)) {
        add(element, d, s->writes[i] == 1 ? Use::Whole : Use::Part);
      } else {
        reads(args[i], element);
        uses_[element].memory = true;  // a pointer it writes through
      }
    }
  }

  const CalleeSummary* summary(const std::string& name) {
    if (auto it = callees_.find(name); it != callees_.end()) return &it->second;
    // A template's instance (`ToDims<true>`) has its template's body.
    const std::string base = name.substr(0, name.find('<'));
    const grammar::Function* fn = nullptr;
    for (const grammar::Function& g : k_.functions)
      if (g.name == base && g.header_element >= 0 && !g.is_kernel) fn = &g;
    if (!fn) return nullptr;
    CalleeSummary s;
    s.writes.assign(fn->params.size(), 0);
    const std::size_t open = k_.elements[static_cast<std::size_t>(fn->header_element)].tokens.last;
    const std::size_t end = closing(t_, open);
    auto param_index = [&](const std::string& n) -> int {
      for (std::size_t p = 0; p < fn->params.size(); ++p)
        if (fn->params[p].name == n) return static_cast<int>(p);
      return -1;
    };
    std::vector<int> written_roots(fn->params.size(), 0), mentions(fn->params.size(), 0);
    for (std::size_t t = open; t <= end && t < t_.size(); ++t) {
      if (!live_(t) || t_[t].kind != TokenKind::Identifier) continue;
      if (auto h = group_hazard(t_[t].text)) s.why_not = "uses " + *h;
      if (starts_with(t_[t].text, "atomic")) s.why_not = "makes atomics";
      const int p = param_index(t_[t].text);
      if (p >= 0 && grammar::names_something(k_, t, open)) ++mentions[static_cast<std::size_t>(p)];
    }
    // Each assignment: to a local or parameter of its own, or through a pointer parameter.
    for (std::size_t i = 0; i < k_.elements.size() && s.why_not.empty(); ++i) {
      const Element& e = k_.elements[i];
      if (e.tokens.first <= open || e.tokens.first >= end || !live_(e.tokens.first) || e.kind != ElementKind::Statement) continue;
      std::size_t last = e.tokens.last;
      while (last > e.tokens.first && (t_[last].is(";") || t_[last].kind == TokenKind::Comment)) --last;
      const std::size_t first = next_code(t_, e.tokens.first);
      if (t_[first].is("return") || t_[first].is("break") || t_[first].is("continue")) continue;
      std::string why;
      const auto x = parse_expression(t_, first, last, &why);
      if (!x) {
        s.why_not = "has a statement gi cannot read (" + why + ")";
        break;
      }
      std::function<void(const Expr&)> walk = [&](const Expr& n) {
        if (n.kind == ExprKind::Call && !is_pure_math_function(n.callee())) s.why_not = "calls " + n.callee();
        if (is_assignment(n)) {
          const Expr* lhs = n.kind == ExprKind::Unary ? &n.children[0] : &n.children[0];
          while (lhs->kind == ExprKind::Member && lhs->text == ".") lhs = &lhs->children[0];
          const bool through = lhs->kind == ExprKind::Index || (lhs->kind == ExprKind::Unary && lhs->text == "*");
          const Expr* root = through ? &lhs->children[0] : lhs;
          if (root->kind != ExprKind::Name) {
            s.why_not = "assigns something other than a name or an element of a parameter";
          } else if (through) {
            const int p = param_index(root->text);
            if (p < 0 || !fn->params[static_cast<std::size_t>(p)].pointer) {
              const int d = grammar::resolve(k_, root->text, e.block, e.pos);
              if (d < 0 || k_.declarations[static_cast<std::size_t>(d)].block == 0)
                s.why_not = "writes through " + root->text + ", which is not its parameter";
            } else {
              s.writes[static_cast<std::size_t>(p)] = 1;
              if (n.text == "=") ++written_roots[static_cast<std::size_t>(p)];
            }
          } else if (grammar::resolve(k_, root->text, e.block, e.pos) < 0 ||
                     k_.declarations[static_cast<std::size_t>(grammar::resolve(k_, root->text, e.block, e.pos))].block == 0) {
            s.why_not = "assigns " + root->text + ", which is not its own";
          }
        }
        for (const Expr& c : n.children) walk(c);
      };
      walk(*x);
    }
    // Written through and also read: its writes are partial.
    for (std::size_t p = 0; p < s.writes.size(); ++p)
      if (s.writes[p] && mentions[p] > written_roots[p]) s.writes[p] = 2;
    return &(callees_[name] = std::move(s));
  }

  // A statement `x = f(x, e)` or `x = f(e, x)`, f a maximum or minimum and
  // e without x: x and the argument (1 or 2) that is x; nullopt otherwise.
  std::optional<std::pair<int, int>> extremum_of(const Expr& e, std::size_t element) const {
    if (e.kind != ExprKind::Binary || e.text != "=" || e.children[0].kind != ExprKind::Name) return std::nullopt;
    const Expr& call = e.children[1];
    if (call.kind != ExprKind::Call || call.children.size() != 3 || !extremum_functions_.count(call.callee()))
      return std::nullopt;
    const std::string& name = e.children[0].text;
    const int d = resolve(name, element);
    if (!local(d) || local_array(d)) return std::nullopt;
    const auto mentions = [&](const Expr& x) {
      const auto names = names_in(x);
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    for (int own : {1, 2})
      if (call.children[static_cast<std::size_t>(own)].is_name(name) && !mentions(call.children[static_cast<std::size_t>(3 - own)]))
        return std::make_pair(d, own);
    return std::nullopt;
  }

  // A statement `x += e` (and spellings), as a sum of x; nullopt otherwise.
  std::optional<int> sum_of(const Expr& e, std::size_t element) const {
    auto plain = [&](const Expr& x) -> int {
      if (x.kind != ExprKind::Name) return -1;
      const int d = resolve(x.text, element);
      return local(d) && !local_array(d) ? d : -1;
    };
    auto without = [&](const Expr& x, const std::string& name) {
      const auto names = names_in(x);
      return std::find(names.begin(), names.end(), name) == names.end();
    };
    if (e.kind == ExprKind::Unary && (e.text == "++" || e.text == "--" || e.text == "post++" || e.text == "post--")) {
      const int d = plain(e.children[0]);
      if (d >= 0) return d;
    }
    if (e.kind != ExprKind::Binary) return std::nullopt;
    const int d = plain(e.children[0]);
    if (d < 0) return std::nullopt;
    const std::string& name = e.children[0].text;
    if ((e.text == "+=" || e.text == "-=") && without(e.children[1], name)) return d;
    if (e.text == "=" && e.children[1].kind == ExprKind::Binary) {
      const Expr& r = e.children[1];
      if (r.text == "+" && r.children[0].is_name(name) && without(r.children[1], name)) return d;
      if (r.text == "+" && r.children[1].is_name(name) && without(r.children[0], name)) return d;
      if (r.text == "-" && r.children[0].is_name(name) && without(r.children[1], name)) return d;
    }
    return std::nullopt;
  }

  // The `=` of `[const] auto [&] [names] = e` in [first, last], if it is one.
  std::optional<std::size_t> structured_binding(std::size_t first, std::size_t last) const {
    std::size_t t = first;
    while (t <= last && (t_[t].is("const") || t_[t].is("constexpr") || t_[t].kind == TokenKind::Comment)) ++t;
    if (t > last || !t_[t].is("auto")) return std::nullopt;
    t = next_code(t_, t + 1);
    if (t <= last && (t_[t].is("&") || t_[t].is("&&"))) t = next_code(t_, t + 1);
    if (t > last || !t_[t].is("[")) return std::nullopt;
    const std::size_t close = closing(t_, t), eq = next_code(t_, close + 1);
    if (eq > last || !t_[eq].is("=")) return std::nullopt;
    return eq;
  }

  void expression(std::size_t first, std::size_t last, std::size_t element, bool statement) {
    std::string why;
    const auto x = parse_expression(t_, first, last, &why);
    if (!x) return trouble(element, "an expression gi cannot read (" + why + ")");
    if (statement)
      if (auto m = extremum_of(*x, element)) {
        const Expr& call = x->children[1];
        reads(call.children[m->second == 1 ? 2 : 1], element);
        add(element, m->first, Use::Extremum);
        uses_[element].accesses.back().function = call.callee();
        return;
      }
    if (statement)
      if (auto d = sum_of(*x, element)) {
        const Expr& value = x->kind == ExprKind::Unary ? *x : x->children[1];
        if (x->kind != ExprKind::Unary) reads(value, element);
        add(element, *d, Use::Sum);
        // `x = x + e`: the right side's x is the sum's own read.
        if (x->kind == ExprKind::Binary && x->text == "=") {
          auto& a = uses_[element].accesses;
          a.erase(std::remove_if(a.begin(), a.end(), [&](const Access& c) { return c.variable == *d && c.use == Use::Read; }),
                  a.end());
        }
        return;
      }
    reads(*x, element);
  }

  // Declarators of `[first, last]` (a declaration without its ';'): each
  // initialiser read, each name assigned whole.
  void declarators(std::size_t first, std::size_t last, std::size_t element) {
    for (const auto& [a, b] : split(t_, first, last, ",")) {
      std::size_t eq = a;
      while (eq <= b && !t_[eq].is("=")) ++eq;
      std::size_t name = std::min(eq, b + 1) - 1;
      while (name > a && (t_[name].kind != TokenKind::Identifier || t_[next_code(t_, name + 1)].is("["))) {
        if (t_[name].is("]")) break;
        --name;
      }
      if (eq <= b) {
        for (std::size_t t = a; t < eq; ++t)
          if (t_[t].is("[")) return trouble(element, "an array declared with an initialiser");
        expression(eq + 1, b, element, false);
      }
      if (eq > b) continue;  // `int x;` gives x no value
      for (std::size_t t = a; t < eq; ++t)
        if (t_[t].kind == TokenKind::Identifier) {
          const int d = resolve(t_[t].text, element);
          if (d >= 0 && k_.declarations[static_cast<std::size_t>(d)].name == t_[t].text && local(d) &&
              k_.declarations[static_cast<std::size_t>(d)].pos == k_.elements[element].pos)
            add(element, d, Use::Whole);
        }
    }
  }

  void collect(std::size_t i) {
    const Element& e = k_.elements[i];
    const std::size_t first = next_code(t_, e.tokens.first);
    std::size_t last = e.tokens.last;
    while (last > first && (t_[last].is(";") || t_[last].kind == TokenKind::Comment)) --last;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
      if (t_[t].is("static")) trouble(i, "a static local");
    switch (e.kind) {
      case ElementKind::Statement:
        if (t_[first].is("break") || t_[first].is("continue") || t_[first].is(";")) return;
        if (t_[first].is("return")) {
          if (first < last) expression(first + 1, last, i, false);
          return;
        }
        if (t_[first].is("goto")) return;
        // `const auto [x, y, z] = e;` (a structured binding): e read; the
        // names it binds are the item's, the same in every lane of a group.
        if (const auto eq = structured_binding(first, last)) return expression(*eq + 1, last, i, false);
        return expression(first, last, i, true);
      case ElementKind::Declaration: {
        // Skip the type words: the declarators start at the first name this element declares.
        std::size_t from = first;
        while (from <= last && !(t_[from].kind == TokenKind::Identifier &&
                                 std::find(e.declares.begin(), e.declares.end(), t_[from].text) != e.declares.end()))
          ++from;
        while (from > first && (t_[from - 1].is("*") || t_[from - 1].is("&"))) --from;
        if (from <= last) declarators(from, last, i);
        return;
      }
      case ElementKind::IfHeader:
        if (e.condition) expression(e.condition->first + 1, e.condition->last - 1, i, false);
        return;
      case ElementKind::SwitchHeader:
      case ElementKind::LoopHeader: {
        std::size_t lp = first;
        while (lp <= e.tokens.last && !t_[lp].is("(")) ++lp;
        if (lp > e.tokens.last) return;  // do
        const std::size_t rp = closing(t_, lp);
        if (!e.is_for) return expression(lp + 1, rp - 1, i, false);
        const auto parts = split(t_, lp + 1, rp - 1, ";");
        if (parts.size() != 3) return trouble(i, "a for header gi cannot read");
        const auto [a, b] = parts[0];
        bool declares = false;
        for (std::size_t d = 0; d < k_.declarations.size(); ++d)
          declares = declares || (k_.declarations[d].pos == e.pos && k_.declarations[d].block != e.block);
        if (a <= b) {
          if (declares) {
            std::size_t from = a;
            while (from <= b && !(t_[from].kind == TokenKind::Identifier && t_[next_code(t_, from + 1)].is("="))) ++from;
            declarators(from, b, i);
          } else {
            expression(a, b, i, false);
          }
        }
        if (parts[1].first <= parts[1].second) expression(parts[1].first, parts[1].second, i, false);
        if (parts[2].first <= parts[2].second) expression(parts[2].first, parts[2].second, i, false);
        return;
      }
      default: return;
    }
  }

  // ---- the kernel as a whole ----

  std::string kernel_unfit() {
    if (!f_.is_kernel) return "not in a __global__ kernel";
    for (std::size_t i : elements_)
      if (auto line = global_index_line(k_, k_.elements[i], true)) {
        index_ = i;
        index_line_ = *line;
        break;
      }
    if (!index_) return "no global index line `i = blockIdx.x * blockDim.x + threadIdx.x;` in the kernel";
    // The outermost block, or a switch path in it (gi_lane, declared before the line, is seen by the rest).
    int b = k_.elements[*index_].block;
    while (b != f_.block && b >= 0 && k_.blocks[static_cast<std::size_t>(b)].branch) b = k_.blocks[static_cast<std::size_t>(b)].parent;
    if (b != f_.block) return "the global index line is not in the kernel's outermost block";
    const Element& index = k_.elements[*index_];
    for (std::size_t t = open_; t <= close_ && t < t_.size(); ++t) {
      if (!live_(t) || t_[t].kind != TokenKind::Identifier) continue;
      const std::string& w = t_[t].text;
      if (starts_with(w, "gi_")) return "the kernel already uses a name starting gi_ (" + w + ")";
      if (t >= index.tokens.first && t <= index.tokens.last) continue;
      const std::string where = " at line " + std::to_string(t_[t].line);
      if (auto h = group_hazard(w)) return "the kernel uses " + *h + where + " (the lanes of a group would differ)";
      const std::size_t dot = next_code(t_, t + 1), field = next_code(t_, dot + 1);
      if ((w == "blockIdx" || w == "blockDim" || w == "gridDim") && dot < t_.size() && t_[dot].is(".") &&
          field < t_.size() && t_[field].is("x"))
        return "the kernel uses " + w + ".x outside the index line" + where + " (a block now holds blockDim.x / G items)";
    }
    index_variable_ = resolve(t_[index_line_.name].text, *index_);
    for (std::size_t i : elements_) {
      if (!uses_[i].trouble.empty()) return line(i) + " has " + uses_[i].trouble;
      if (i == *index_) continue;
      for (const Access& a : uses_[i].accesses)
        if (a.variable == index_variable_ && a.use != Use::Read)
          return "the index " + t_[index_line_.name].text + " is assigned again at " + line(i);
    }
    return "";
  }

  // ---- one loop ----

  struct Extent {
    std::size_t header = 0, close = 0;  // elements
    std::size_t last_token = 0;
  };
  // The loop whose header is element h, up to its body's closing brace; nullopt without braces.
  std::optional<Extent> extent(std::size_t h) const {
    std::size_t next = h + 1;
    while (next < k_.elements.size() && k_.elements[next].kind == ElementKind::Comment) ++next;
    if (next >= k_.elements.size() || k_.elements[next].kind != ElementKind::BlockOpen) return std::nullopt;
    const std::size_t end = closing(t_, k_.elements[next].tokens.first);
    for (std::size_t i = next; i < k_.elements.size(); ++i)
      if (k_.elements[i].kind == ElementKind::BlockClose && k_.elements[i].tokens.first == end) return Extent{h, i, end};
    return std::nullopt;
  }
  bool inside(const Extent& x, std::size_t element) const { return element > x.header && element < x.close; }

  // The loops (braced) around element `e`, innermost first; `unbraced` is set when a loop around it has no braces.
  std::vector<Extent> loops_around(std::size_t e, bool& unbraced) const {
    std::vector<Extent> out;
    for (std::size_t i : elements_) {
      if (i >= e) break;
      if (k_.elements[i].kind != ElementKind::LoopHeader) continue;
      const auto x = extent(i);
      if (!x) {
        // A brace-less body holds the elements of the blocks under the loop's own.
        if (encloses(k_.elements[i].block, k_.elements[e].block) && k_.elements[e].block != k_.elements[i].block)
          unbraced = true;
        continue;
      }
      if (inside(*x, e)) out.push_back(*x);
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  std::vector<Access> accesses_of(int variable) const {
    std::vector<Access> out;
    for (std::size_t i : elements_)
      for (const Access& a : uses_[i].accesses)
        if (a.variable == variable) out.push_back(a);
    return out;
  }
  // Whether a whole assignment among `writes` reaches read `r` on every path
  // (it comes first, in a block around the read's) and lies in [from, to].
  bool covered(const Access& r, const std::vector<Access>& all, std::size_t from, std::size_t to) const {
    for (const Access& w : all)
      if (w.use == Use::Whole && w.order < r.order && w.element >= from && w.element <= to &&
          encloses(k_.elements[w.element].block, k_.elements[r.element].block))
        return true;
    return false;
  }

  std::string name_of(int d) const { return k_.declarations[static_cast<std::size_t>(d)].name; }

  // Kahan's compensated sum, four statements in a row of the body:
  //   y = x - c;  t = s + y;  c = (t - s) - y;  s = t;
  // Split over the lanes, each lane keeps the compensated sum of its own
  // iterations, and the lanes' s (and c) add up to the seed's total up to
  // rounding: s and c count as sums (their uses here become Use::Sum), y and
  // t stay temporaries assigned before they are read.
  void compensated_sums(const std::vector<std::size_t>& body) {
    const auto statement = [&](std::size_t i) -> std::optional<Expr> {
      const Element& e = k_.elements[i];
      if (e.kind != ElementKind::Statement) return std::nullopt;
      std::size_t last = e.tokens.last;
      while (last > e.tokens.first && (t_[last].is(";") || t_[last].kind == TokenKind::Comment)) --last;
      auto x = parse_expression(t_, e.tokens.first, last);
      if (!x || x->kind != ExprKind::Binary || x->text != "=" || x->children[0].kind != ExprKind::Name) return std::nullopt;
      return x;
    };
    const auto binary = [](const Expr& e, const char* op) { return e.kind == ExprKind::Binary && e.text == op; };
    for (std::size_t k = 0; k + 3 < body.size(); ++k) {
      std::optional<Expr> st[4];
      bool ok = true;
      for (std::size_t j = 0; j < 4 && ok; ++j) ok = static_cast<bool>(st[j] = statement(body[k + j]));
      if (!ok) continue;
      const std::string y = st[0]->children[0].text, t = st[1]->children[0].text, c = st[2]->children[0].text,
                        s = st[3]->children[0].text;
      if (std::set<std::string>{y, t, c, s}.size() != 4) continue;
      const Expr &r0 = st[0]->children[1], &r1 = st[1]->children[1], &r2 = st[2]->children[1];
      const auto names = names_in(r0.kind == ExprKind::Binary ? r0.children[0] : r0);
      const bool x_free = std::none_of(names.begin(), names.end(), [&](const std::string& n) {
        return n == y || n == t || n == c || n == s;
      });
      const bool shape =
          binary(r0, "-") && r0.children[1].is_name(c) && x_free && binary(r1, "+") &&
          ((r1.children[0].is_name(s) && r1.children[1].is_name(y)) || (r1.children[0].is_name(y) && r1.children[1].is_name(s))) &&
          binary(r2, "-") && r2.children[1].is_name(y) && binary(r2.children[0], "-") && r2.children[0].children[0].is_name(t) &&
          r2.children[0].children[1].is_name(s) && st[3]->children[1].is_name(t);
      const int ds = resolve(s, body[k + 3]), dc = resolve(c, body[k + 2]);
      if (!shape || !local(ds) || local_array(ds) || !local(dc) || local_array(dc)) continue;
      const auto relabel = [&](std::size_t i, int d, bool keep_as_sum) {
        auto& a = uses_[i].accesses;
        a.erase(std::remove_if(a.begin(), a.end(), [&](const Access& x) { return x.variable == d && x.use == Use::Read; }),
                a.end());
        if (keep_as_sum)
          for (Access& x : a)
            if (x.variable == d) x.use = Use::Sum;
      };
      relabel(body[k], dc, false);
      relabel(body[k + 1], ds, false);
      relabel(body[k + 2], ds, false);
      relabel(body[k + 2], dc, true);
      relabel(body[k + 3], ds, true);
      k += 3;
    }
  }

  std::optional<std::string> refuse(std::size_t h, WarpPerItemSite& site) {
    const Element& header = k_.elements[h];
    if (h < *index_) return "the loop comes before the global index line";
    const auto loop = extent(h);
    if (!loop) return "the loop's body has no braces";
    const bool loop_while = !header.is_for;
    const ForLoopForm form = loop_while ? while_loop_form(h, *loop) : for_loop_form(k_, h);
    if (!form.ok)
      return loop_while ? "the loop is not `while (V < E) { ... V++; }` with V++ alone on the body's last line and no continue"
                        : "the loop is not `for (V = A; V < E; V++)`";
    const std::string& var = form.var;
    const int variable = resolve(var, h);
    const std::vector<std::string>& bound = form.bound_names;
    // The body.
    std::vector<std::size_t> body;
    for (std::size_t i : elements_)
      if (inside(*loop, i)) body.push_back(i);
    compensated_sums(body);
    std::map<int, std::vector<Access>> touched;  // variables declared outside the body that it assigns
    for (std::size_t i : body) {
      if (i == form.increment) continue;  // a while loop's V++, which the rewrite makes the step
      const Element& e = k_.elements[i];
      const std::size_t w = next_code(t_, e.tokens.first);
      if (t_[w].is("return") || t_[w].is("goto")) return line(i) + ": a " + t_[w].text + " inside the loop";
      if (t_[w].is("break") && e.kind == ElementKind::Statement) {
        int b = e.block;
        while (b >= 0 && !k_.blocks[static_cast<std::size_t>(b)].breakable) b = k_.blocks[static_cast<std::size_t>(b)].parent;
        if (b == loop_block(h)) return line(i) + ": a break leaves the loop";
      }
      if (uses_[i].memory) return line(i) + ": the loop body writes memory";
      for (const Access& a : uses_[i].accesses) {
        if (a.use == Use::Read) continue;
        const std::string& n = name_of(a.variable);
        if (a.variable == variable) return line(i) + ": the loop variable " + var + " is assigned in the body";
        if (std::find(bound.begin(), bound.end(), n) != bound.end())
          return line(i) + ": " + n + ", of the loop's bound, is assigned in the body";
        const int db = k_.declarations[static_cast<std::size_t>(a.variable)].block;
        if (!encloses(loop_block(h), db)) touched[a.variable];
      }
    }
    for (auto& [d, list] : touched) {
      for (std::size_t i : body)
        for (const Access& a : uses_[i].accesses)
          if (a.variable == d && i != form.increment) list.push_back(a);
    }
    // A loop variable declared outside the loop keeps a lane's own last value.
    if (variable < 0) return "the loop variable " + var + " is not a local";
    if (encloses(k_.declarations[static_cast<std::size_t>(variable)].block, header.block)) touched[variable];
    bool unbraced = false;
    const std::vector<Extent> around = loops_around(h, unbraced);
    if (unbraced) return "a loop around it has a body without braces";
    std::vector<LoopSum> sums;
    std::vector<LoopFlag> flags;
    std::vector<LoopRecord> records;
    std::vector<LoopExtremum> extrema;
    std::set<int> in_records;
    const std::vector<NestLevel> nest = nest_of(h, body);
    const std::string counter = nest.empty() ? var : "gi_flat";
    for (const auto& [d, list] : touched) {
      const std::string& n = name_of(d);
      const bool sum = !list.empty() && std::all_of(list.begin(), list.end(), [](const Access& a) { return a.use == Use::Sum; });
      if (sum) {
        const std::string type = type_of(d);
        if (is_param(d) || !shuffled_type(type))
          return line(list[0].element) + ": " + n + " is a sum of type '" + type + "', which gi does not shuffle";
        sums.push_back(LoopSum{n, type});
        continue;
      }
      const bool extremum = !list.empty() && std::all_of(list.begin(), list.end(), [&](const Access& a) {
        return a.use == Use::Extremum && extremum_functions_.at(a.function) == extremum_functions_.at(list[0].function);
      });
      if (extremum) {
        const std::string type = type_of(d);
        if (is_param(d) || !shuffled_type(type))
          return line(list[0].element) + ": " + n + " keeps a " + extremum_functions_.at(list[0].function) +
                 "imum of type '" + type + "', which gi does not shuffle";
        extrema.push_back(LoopExtremum{n, type, list[0].function});
        continue;
      }
      const auto why_not = temporary_problem(d, list, *loop, around, h);
      if (!why_not || in_records.count(d)) continue;
      LoopFlag flag;
      if (flag_of(d, list, flag)) {
        flags.push_back(flag);
        continue;
      }
      std::string why_record;
      if (record_of(d, list, *loop, body, counter == var ? type_of(variable) : "int", records, in_records, why_record))
        continue;
      return *why_not + why_record;
    }
    if (sums.empty() && flags.empty() && records.empty() && extrema.empty())
      return "the loop sums nothing (no `x += e`, `x = fmaxf(x, e)`, flag or record of a maximum or minimum declared "
             "outside it)";
    // Memory: none written before the loop or in a loop around it; after it, whole statements.
    std::vector<std::size_t> stores;
    for (std::size_t i : elements_) {
      if (!uses_[i].memory || inside(*loop, i)) continue;
      const bool in_around = std::any_of(around.begin(), around.end(), [&](const Extent& x) { return inside(x, i); });
      if (i < h || in_around)
        return line(i) + ": the kernel writes memory " + (i < h ? "before the loop" : "in a loop around it") +
               " (a lane could load what another lane of its group stored)";
      const Element& e = k_.elements[i];
      if (e.kind != ElementKind::Statement || !alone_on_its_lines(i))
        return line(i) + ": memory written after the loop outside a statement of its own line";
      stores.push_back(i);
    }
    site.function = function_;
    site.loop = h;
    site.body_close = loop->close;
    site.variable = var;
    site.start_first = form.start_first;
    site.start_last = form.start_last;
    site.step_first = form.step_first;
    site.step_last = form.step_last;
    site.header_first = form.header_first;
    site.header_last = form.header_last;
    site.sums = std::move(sums);
    site.flags = std::move(flags);
    site.records = std::move(records);
    site.extrema = std::move(extrema);
    site.increment = form.increment;
    site.literal_trips = nest.empty() ? form.trips : nest_trips(nest);
    site.nest = nest;
    site.index_line = *index_;
    site.index_first = index_line_.first;
    site.index_last = index_line_.last;
    site.index_flattened = index_line_.flattened;
    site.stores = std::move(stores);
    return std::nullopt;
  }

  // ---- a loop's header, a perfect nest, flags and records ----

  bool is_while(std::size_t h) const { return t_[next_code(t_, k_.elements[h].tokens.first)].is("while"); }

  // `while (V < E) { ...; V++; }` (`<=`; `++V`, `V += 1`) as the for loop it
  // is: V++ alone on the braced body's last line, no continue in the body
  // (it would skip V++, where a for loop's continue runs its step). No start:
  // the rewrite adds the lane to V where the loop begins.
  ForLoopForm while_loop_form(std::size_t h, const Extent& loop) const {
    ForLoopForm f;
    const Element& header = k_.elements[h];
    std::size_t lp = next_code(t_, header.tokens.first);
    while (lp <= header.tokens.last && !t_[lp].is("(")) ++lp;
    if (lp > header.tokens.last) return f;
    const std::size_t rp = closing(t_, lp);
    const auto cond = parse_expression(t_, lp + 1, rp - 1);
    if (!cond || cond->kind != ExprKind::Binary || (cond->text != "<" && cond->text != "<=") ||
        cond->children[0].kind != ExprKind::Name)
      return f;
    std::optional<std::size_t> last;
    for (std::size_t i : elements_) {
      if (!inside(loop, i)) continue;
      if (k_.elements[i].kind == ElementKind::Statement && t_[next_code(t_, k_.elements[i].tokens.first)].is("continue"))
        return f;
      last = i;
    }
    // The body's own block: the one its opening brace starts.
    std::size_t open = h + 1;
    while (k_.elements[open].kind == ElementKind::Comment) ++open;
    if (!last || k_.elements[*last].kind != ElementKind::Statement ||
        k_.elements[*last].block != k_.elements[open].block_after || !alone_on_its_lines(*last))
      return f;
    const Element& e = k_.elements[*last];
    std::size_t end = e.tokens.last;
    while (end > e.tokens.first && (t_[end].is(";") || t_[end].kind == TokenKind::Comment)) --end;
    const auto step = parse_expression(t_, next_code(t_, e.tokens.first), end);
    const std::string& var = cond->children[0].text;
    const bool unit = step && (((step->kind == ExprKind::Unary && (step->text == "++" || step->text == "post++")) &&
                                step->children[0].is_name(var)) ||
                               (step->kind == ExprKind::Binary && step->text == "+=" && step->children[0].is_name(var) &&
                                step->children[1].kind == ExprKind::Literal && step->children[1].text == "1"));
    if (!unit) return f;
    f.ok = true;
    f.var = var;
    f.op = cond->text;
    f.bound = expression_text(t_, cond->children[1]);
    f.bound_names = names_in(cond->children[1]);
    f.header_first = next_code(t_, header.tokens.first);
    f.header_last = rp;
    f.increment = *last;
    return f;
  }

  std::size_t next_element(std::size_t i) const {
    ++i;
    while (i < k_.elements.size() && k_.elements[i].kind == ElementKind::Comment) ++i;
    return i;
  }

  // The perfect nest loop `h` heads, `for (int k ...) { for (int j ...) { BODY } }` with nothing
  // between the headers and braces, as levels (two or more), or empty. The
  // nest is collapsed into one loop over gi_flat, so the levels' bounds must
  // not read the nest's counters nor be assigned in it, and no break may end
  // an inner level (it would end the collapsed loop).
  std::vector<NestLevel> nest_of(std::size_t h, const std::vector<std::size_t>& body) const {
    const std::vector<NestLevel> levels = perfect_nest(k_, h);
    std::vector<std::string> counters, bounds;
    std::vector<int> blocks;
    for (const NestLevel& l : levels) {
      counters.push_back(l.variable);
      bounds.insert(bounds.end(), l.names.begin(), l.names.end());
      blocks.push_back(loop_block(l.header));
    }
    if (levels.size() < 2) return {};
    bounds.insert(bounds.end(), counters.begin(), counters.end());  // recovered as constants
    for (std::size_t i : body) {
      const Element& e = k_.elements[i];
      if (t_[next_code(t_, e.tokens.first)].is("break") && e.kind == ElementKind::Statement) {
        int b = e.block;
        while (b >= 0 && !k_.blocks[static_cast<std::size_t>(b)].breakable) b = k_.blocks[static_cast<std::size_t>(b)].parent;
        if (std::find(blocks.begin(), blocks.end(), b) != blocks.end()) return {};
      }
      const bool level = std::any_of(levels.begin(), levels.end(), [&](const NestLevel& l) { return l.header == i; });
      for (const Access& a : uses_[i].accesses)
        if (!level && a.use != Use::Read && std::find(bounds.begin(), bounds.end(), name_of(a.variable)) != bounds.end())
          return {};
    }
    return levels;
  }
  // A flag: the body only sets d to one constant (`inside = 0;`) and never reads it.
  bool flag_of(int d, const std::vector<Access>& in_body, LoopFlag& flag) const {
    std::string value;
    for (const Access& a : in_body) {
      if (a.use != Use::Whole || k_.elements[a.element].kind != ElementKind::Statement) return false;
      const Element& e = k_.elements[a.element];
      std::size_t last = e.tokens.last;
      while (last > e.tokens.first && (t_[last].is(";") || t_[last].kind == TokenKind::Comment)) --last;
      const auto x = parse_expression(t_, next_code(t_, e.tokens.first), last);
      if (!x || x->kind != ExprKind::Binary || x->text != "=" || !x->children[0].is_name(name_of(d))) return false;
      bool literal = false;
      literal_value(x->children[1], literal);
      const std::string v = expression_text(t_, x->children[1]);
      if (!literal || (!value.empty() && v != value)) return false;
      value = v;
    }
    const std::string type = type_of(d);
    if (value.empty() || is_param(d) || !shuffled_type(type)) return false;
    flag = LoopFlag{name_of(d), type, value};
    return true;
  }

  // A record of a maximum or minimum d belongs to (analysis/extremum_record.hpp):
  // every assignment of its variables in the body is in the comparison's
  // braces, and they are read there only in the comparison.
  bool record_of(int d, const std::vector<Access>& in_body, const Extent& loop, const std::vector<std::size_t>& body,
                 const std::string& counter_type, std::vector<LoopRecord>& records, std::set<int>& in_records,
                 std::string& why) const {
    // The innermost if around d's first assignment in the body.
    std::size_t assigned = 0;
    for (const Access& a : in_body)
      if (a.use != Use::Read) {
        assigned = a.element;
        break;
      }
    std::size_t comparison = 0;
    for (std::size_t i = assigned; i > loop.header && comparison == 0; --i) {
      const Element& e = k_.elements[i];
      if (e.kind == ElementKind::IfHeader) {
        const auto x = extent_of_if(i);
        if (x && assigned > i && assigned < *x) comparison = i;
      }
    }
    if (comparison == 0) return false;
    const RecordUpdate r = record_update(k_, comparison);
    const std::string at = " at " + line(comparison);
    if (!r.why.empty()) return why = " (no record of a maximum or minimum kept by the comparison" + at + ": " + r.why + ")", false;
    if (counter_type != "int") return why = " (a record of a maximum or minimum needs an int loop counter)", false;
    LoopRecord record;
    record.op = r.op;
    record.key = r.compared.root;
    std::set<int> roots;
    for (const RecordField& f : r.fields) {
      const int v = resolve(f.root, r.statements[0]);
      if (!local(v) || is_param(v) || local_array(v) || encloses(loop_block(loop.header), k_.declarations[static_cast<std::size_t>(v)].block))
        return why = " (" + f.root + ", of the record the comparison" + at + " keeps, is no local declared outside the loop)", false;
      const std::string type = f.field.empty() ? type_of(v) : component_type(type_of(v));
      if (!shuffled_type(type) || (!f.field.empty() && f.field.find_first_not_of("xyzw") != std::string::npos))
        return why = " (" + f.access + ", of the record the comparison" + at + " keeps, is of a type gi does not shuffle)", false;
      if (f.access == r.compared.access) record.score_type = type;
      else if (std::none_of(record.others.begin(), record.others.end(), [&](const auto& o) { return o.first == f.access; }))
        record.others.emplace_back(f.access, type);
      roots.insert(v);
    }
    for (std::size_t i : body)
      for (const Access& a : uses_[i].accesses) {
        if (!roots.count(a.variable)) continue;
        const bool in_comparison = std::find(r.statements.begin(), r.statements.end(), i) != r.statements.end();
        if (a.use != Use::Read && !in_comparison)
          return why = " (" + name_of(a.variable) + ", of the record the comparison" + at + " keeps, is assigned outside it at " +
                       line(i) + ")", false;
        if (a.use == Use::Read && i != comparison)
          return why = " (" + name_of(a.variable) + ", of the record the comparison" + at + " keeps, is read at " + line(i) + ")",
                 false;
      }
    (void)d;
    record.score = r.compared.access;
    record.score_statement = r.score_statement;
    records.push_back(record);
    in_records.insert(roots.begin(), roots.end());
    return true;
  }
  // The closing brace element of the braced body of the if at element `i`; 0 without braces.
  std::optional<std::size_t> extent_of_if(std::size_t i) const {
    const std::size_t open = next_element(i);
    if (open >= k_.elements.size() || k_.elements[open].kind != ElementKind::BlockOpen) return std::nullopt;
    const std::size_t end = closing(t_, k_.elements[open].tokens.first);
    for (std::size_t c = open; c < k_.elements.size(); ++c)
      if (k_.elements[c].kind == ElementKind::BlockClose && k_.elements[c].tokens.first == end) return c;
    return std::nullopt;
  }

  // The loop's own block: its header's declarations stand there, its
  // braced body is a block inside it, and a break in the body ends there.
  int loop_block(std::size_t h) const {
    std::size_t next = h + 1;
    while (next < k_.elements.size() && k_.elements[next].kind == ElementKind::Comment) ++next;
    return k_.blocks[static_cast<std::size_t>(k_.elements[next].block_after)].parent;
  }

  bool alone_on_its_lines(std::size_t i) const {
    const Element& e = k_.elements[i];
    const int from = t_[e.tokens.first].line, to = t_[e.tokens.last].end_line;
    for (std::size_t t = 0; t < t_.size(); ++t) {
      const Token& x = t_[t];
      if ((t < e.tokens.first || t > e.tokens.last) && x.kind != TokenKind::Comment && x.line <= to && x.end_line >= from)
        return false;
    }
    return true;
  }

  // Why a variable the body assigns, and that is no sum, cannot be left to
  // each lane: its value is carried between iterations, or read after the loop.
  std::optional<std::string> temporary_problem(int d, const std::vector<Access>& in_body, const Extent& loop,
                                               const std::vector<Extent>& around, std::size_t h) const {
    const std::string& n = name_of(d);
    const std::vector<Access> all = accesses_of(d);
    for (const Access& a : in_body)
      if (a.use != Use::Whole && !covered(a, in_body, loop.header, loop.close)) {
          return line(a.element) + ": " + n + " is carried from one iteration to the next and is no sum";
        }
    for (const Access& r : all) {
      if (r.use == Use::Whole || (r.element >= loop.header && r.element <= loop.close)) continue;
      const Extent* shared = nullptr;  // the innermost loop around both the site and the read
      for (const Extent& x : around)
        if (inside(x, r.element)) {
          shared = &x;
          break;
        }
      if (r.element < h && !shared) continue;  // runs before the loop ever does
      const bool ok = r.element > loop.close ? covered(r, all, loop.close, r.element)
                                             : covered(r, all, shared->header, r.element);
      if (!ok)
        return line(r.element) + ": " + n + ", assigned in the loop at " + line(in_body.empty() ? h : in_body[0].element) +
               ", is read after it and is no sum";
    }
    return std::nullopt;
  }

  const ParsedKernel& k_;
  const std::vector<Token>& t_;
  const grammar::Function& f_;
  int function_;
  const std::function<bool(std::size_t)>& live_;
  const std::map<std::string, std::string>& extremum_functions_;
  WarpPerItemSites& out_;
  std::size_t open_ = 0, close_ = 0;
  std::vector<std::size_t> elements_;
  std::vector<ElementUses> uses_;
  std::map<std::string, CalleeSummary> callees_;
  std::optional<std::size_t> index_;
  GlobalIndexLine index_line_;
  int index_variable_ = -1;
};

}  // namespace

WarpPerItemSites find_warp_per_item_sites(const ParsedKernel& k, const std::function<bool(std::size_t)>& live) {
  const std::function<bool(std::size_t)> every = live ? live : [](std::size_t) { return true; };
  WarpPerItemSites out;
  const std::map<std::string, std::string> extremum_functions = find_extremum_functions(k);
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    if (k.functions[f].header_element < 0 || !k.functions[f].is_kernel) continue;
    FunctionLoops(k, static_cast<int>(f), every, extremum_functions, out).run();
  }
  return out;
}

}  // namespace gi::analysis

// The Analyser's guards (analysis/parameter_use_analyser.hpp): the bounds a
// condition gives, the guards in force at an element (enclosing ifs and
// loops, early returns before it, the left of && and ||), and from them the
// axes a guard bounds somewhere and the work item's bound per axis.
#include <map>
#include <optional>
#include <string>

#include "analysis/expression.hpp"
#include "analysis/parameter_use_analyser.hpp"

namespace gi::analysis::detail {

// Bounds from `cond` holding (negated: from it failing, as before an early
// return). `if_site`: the branch site of an `if` whose whole condition
// `cond` is ("" inside && or ||, whose operands are sites of their own;
// kNoSite for a loop's condition).
void Analyser::bounds_from(const Expr& c, bool negated, int line, std::map<std::string, Bound>& out,
                           const std::string& if_site) const {
  if (c.kind == ExprKind::Unary && c.text == "!" && c.children.size() == 1)
    return bounds_from(c.children[0], !negated, line, out, if_site == kNoSite ? kNoSite : "");
  if (c.kind == ExprKind::Call) return helper_guard(c, negated, line, out);
  // A local that holds a test (NiftyReg's resampling: `bool xInBounds = -1 <
  // X && X < fi_xyz.x;` then `xInBounds && yInBounds ? img[idx] : pad`): the
  // test, where neither the local nor a name the test reads is assigned again.
  if (c.kind == ExprKind::Name && assigned_once_.count(c.text)) {
    const auto d = definition(c.text);
    if (d && d->kind == ExprKind::Binary) {
      bool fixed = true;
      for (const std::string& n : names_in(*d)) fixed = fixed && n != c.text && !reassigned(n);
      if (fixed) return bounds_from(*d, negated, line, out, if_site);
    }
    return;
  }
  if (c.kind != ExprKind::Binary || c.children.size() != 2) return;
  if ((!negated && c.text == "&&") || (negated && c.text == "||")) {
    const std::string operand = if_site == kNoSite ? kNoSite : "";
    bounds_from(c.children[0], negated, line, out, operand);
    bounds_from(c.children[1], negated, line, out, operand);
    return;
  }
  // Normalise to `name OP limit`; the global thread index written out
  // (`if (threadIdx.x + blockIdx.x * blockDim.x >= size) return;`) is the
  // name kGlobalIndex + axis.
  // The thread's number in its block (`threadIdx.x < s`) is the name
  // thread_key gives it: a tree reduction's guard.
  auto cmp = oriented(c, [&](const Expr& e) {
    return e.kind == ExprKind::Name || global_index_axis(e) >= 0 || !thread_key(e).empty();
  });
  // Else, or where that subject is a size (`i + d < n`: n), a guard on an
  // expression: a sum that reads a local, a vector local's component.
  if (!cmp || (cmp->subject->kind == ExprKind::Name && scalars_.count(cmp->subject->text)))
    if (const auto on_expression = oriented(c, [&](const Expr& e) { return guardable(e); })) cmp = on_expression;
  if (!cmp) return;
  std::string op = cmp->op;
  const Expr *name = cmp->subject, *limit = cmp->other;
  const bool expression = name->kind != ExprKind::Name && global_index_axis(*name) < 0 && thread_key(*name).empty() &&
                          guardable(*name);
  const std::string key = name->kind == ExprKind::Name   ? name->text
                          : expression                 ? kExpression + canonical_text(*name)
                          : !thread_key(*name).empty() ? thread_key(*name)
                                                       : kGlobalIndex + std::to_string(global_index_axis(*name));
  if (expression) guarded_subjects_.emplace(key, *name);
  if (negated) {
    static const std::map<std::string, std::string> opposite = {
        {">=", "<"}, {">", "<="}, {"<", ">="}, {"<=", ">"}, {"!=", "=="}, {"==", "!="}};
    if (!opposite.count(op)) return;
    op = opposite.at(op);
  }
  std::string why;
  // `0 < x` (x > 0): x's least value, as a clamp's false side gives it.
  if ((op == ">" || op == ">=") && (name->kind == ExprKind::Name || expression)) {
    const auto r = eval(*limit, {}, why);
    if (r && r->hi && *r->hi == r->lo && !r->strict) {
      Bound low{op == ">" ? r->lo + SymbolicSize::constant(1) : r->lo, line, "", "", "", false};
      low.inclusive = op == ">=";
      out.emplace(kLowerBound + key, low);
    }
    return;
  }
  // `index != -1`: an end of index's range at -1 moves past it (kNotEqual).
  if (op == "!=") {
    const auto r = name->kind == ExprKind::Name ? eval(*limit, {}, why) : std::nullopt;
    if (r && r->hi && *r->hi == r->lo && !r->real) out.emplace(kNotEqual + key, Bound{r->lo, line, "", "", "", false});
    return;
  }
  // `i == c` bounds i by c as `i <= c` does (its lower end is its definition's).
  if (op != "<" && op != "<=" && op != "==") return;
  const auto r = eval(*limit, {}, why);
  if (!r || !r->hi || !(*r->hi == r->lo) || r->strict) {
    if (expression) return;  // no reason to keep: no index reads the expression by name
    Bound u{SymbolicSize(), line, "", "", "", false};
    u.unreadable = "the guard '" + expression_text(k_.tokens, c) + "' (line " + std::to_string(line) +
                   ") names no size gi can use" + (why.empty() ? std::string() : ": " + why);
    u.limit_first = limit->first;
    u.limit_last = limit->last;
    u.inclusive = op == "<=";
    out.emplace(kUnreadable + key, u);
    return;
  }
  SymbolicSize l = r->lo;
  if (op == "<=" || op == "==") l = l + SymbolicSize::constant(1);
  Bound b{l, line, "", "", "", false};
  b.one_value = op == "==";
  b.inclusive = op == "<=" || op == "==";
  if (if_site != kNoSite) {
    b.branch = !if_site.empty() ? if_site
                                : "op@" + std::to_string(tok(c.first).line) + ":" + std::to_string(tok(c.first).column);
    b.past_bound = negated ? "true" : "false";
  }
  out.emplace(key, b);
}

// A call of a __device__ helper that returns one test (`is_grey(v)`,
// returning `value >= 0.0f && value < 256.0f`): the bounds that test gives
// its parameters, on the names the call passes for them. A limit that names
// a parameter is what the call passes for it (`in_range(v, n)`), so every
// limit is over the caller's sizes.
void Analyser::helper_guard(const Expr& call, bool negated, int line, std::map<std::string, Bound>& out) const {
  const auto sub = called_helper(call, {}, 0);
  const auto test = sub ? sub->only_return() : std::nullopt;
  if (!test) return;
  std::map<std::string, std::string> passed;  // the helper's parameter -> the caller's name
  for (std::size_t i = 0; i < sub->f_.params.size(); ++i)
    if (call.children[i + 1].kind == ExprKind::Name) passed[sub->f_.params[i].name] = call.children[i + 1].text;
  std::map<std::string, Bound> inner;
  sub->bounds_from(*test, negated, line, inner, kNoSite);
  for (auto& [key, bound] : inner) {
    const bool lower = key.rfind(kLowerBound, 0) == 0;
    const auto to = passed.find(lower ? key.substr(kLowerBound.size()) : key);
    if (to == passed.end()) continue;
    bound.line = line;
    out.emplace(lower ? kLowerBound + to->second : to->second, bound);
  }
}

// A read inside an if's or a while's condition, right of `&&` (or `||`,
// or in a ternary's branch): what the left operand says holds there, as
// `if (x < nx && mask[x] >= 0)` reads mask only where x < nx.
void Analyser::short_circuit_guards(std::size_t at, std::size_t token, std::map<std::string, Bound>& guards) const {
  const grammar::Element& el = k_.elements[elements_[at]];
  const std::optional<Expr> c = element_expression(el);
  if (!c) return;
  const int line = tok(el.tokens.first).line;
  const auto holds = [&](const Expr& e) { return e.first <= token && token <= e.last; };
  for (const Expr* e = &*c; e != nullptr;) {
    const Expr* inner = nullptr;
    if (e->kind == ExprKind::Binary && (e->text == "&&" || e->text == "||") && e->children.size() == 2 &&
        holds(e->children[1])) {
      bounds_from(e->children[0], e->text == "||", line, guards);
      inner = &e->children[1];
    } else if (e->kind == ExprKind::Ternary && e->children.size() == 3 && !holds(e->children[0])) {
      const bool then = holds(e->children[1]);
      bounds_from(e->children[0], !then, line, guards);
      inner = &e->children[then ? 1 : 2];
    } else {
      for (const Expr& child : e->children)
        if (holds(child)) inner = &child;
    }
    e = inner;
  }
}

// The expression an element evaluates: an if's or while's condition, an
// expression statement, a return's value, a declaration's first initialiser.
std::optional<Expr> Analyser::element_expression(const grammar::Element& el) const {
  if (el.kind == ElementKind::IfHeader) return condition_of(el);
  if (el.kind == ElementKind::LoopHeader && tok(el.tokens.first).is("while") && tok(el.tokens.last).is(")"))
    return parse(next(next(el.tokens.first)), prev(el.tokens.last));
  if ((el.kind != ElementKind::Statement && el.kind != ElementKind::Declaration) || !tok(el.tokens.last).is(";"))
    return std::nullopt;
  std::size_t first = el.tokens.first;
  if (tok(first).is("return")) first = next(first);
  if (el.kind == ElementKind::Declaration) {
    std::size_t eq = first;
    while (eq < el.tokens.last && !tok(eq).is("=") && !tok(eq).is("(") && !tok(eq).is("[")) eq = next(eq);
    if (!tok(eq).is("=")) return std::nullopt;
    first = next(eq);
    return parse(first, expression_end(first));
  }
  if (first >= el.tokens.last) return std::nullopt;
  return parse(first, prev(el.tokens.last));
}

// Every test a `&&`, `||` or ternary in `e` makes, as if it held: whether
// the kernel guards an axis somewhere (a ternary `i < n ? in[i] : 0`).
void Analyser::every_test(const Expr& e, int line, std::map<std::string, Bound>& guards) const {
  if (e.kind == ExprKind::Binary && (e.text == "&&" || e.text == "||") && e.children.size() == 2)
    bounds_from(e.children[0], e.text == "||", line, guards);
  if (e.kind == ExprKind::Ternary && e.children.size() == 3) bounds_from(e.children[0], false, line, guards);
  for (const Expr& child : e.children) every_test(child, line, guards);
}

// "if@L:C": the branch site of an `if` header (its keyword's position).
std::string Analyser::if_site(const grammar::Element& h) const {
  const grammar::Token& t = tok(h.tokens.first);
  return "if@" + std::to_string(t.line) + ":" + std::to_string(t.column);
}

std::optional<Expr> Analyser::condition_of(const grammar::Element& h) const {
  if (!h.condition) return std::nullopt;
  return parse(h.condition->first + 1, h.condition->last - 1);
}

// `for (init; cond; step)`: the cond's bounds.
void Analyser::loop_bounds(const grammar::Element& h, std::map<std::string, Bound>& out) const {
  std::size_t semis[2] = {0, 0};
  int found = 0, depth = 0;
  for (std::size_t t = h.tokens.first; t <= h.tokens.last && found < 2; ++t) {
    if (tok(t).is("(")) ++depth;
    if (tok(t).is(")")) --depth;
    if (depth == 1 && tok(t).is(";")) semis[found++] = t;
  }
  if (found < 2 || semis[1] <= semis[0] + 1) return;
  if (const auto c = parse(semis[0] + 1, semis[1] - 1)) bounds_from(*c, false, tok(h.tokens.first).line, out);
}

std::size_t Analyser::prev_element(std::size_t i) const {
  while (i > 0) {
    --i;
    if (k_.elements[elements_[i]].kind != ElementKind::Comment) return i;
  }
  return elements_.size();
}

bool Analyser::is_return(std::size_t i) const {
  const grammar::Element& el = k_.elements[elements_[i]];
  return el.kind == ElementKind::Statement && tok(el.tokens.first).is("return");
}

// The guards in force at element elements_[at].
std::map<std::string, Bound> Analyser::guards_at(std::size_t at) const {
  std::map<std::string, Bound> out;
  const auto add_header = [&](std::size_t h) {
    if (h >= elements_.size()) return;
    const grammar::Element& el = k_.elements[elements_[h]];
    if (el.kind == ElementKind::IfHeader) {
      if (const auto c = condition_of(el)) bounds_from(*c, false, tok(el.tokens.first).line, out, if_site(el));
    } else if (el.kind == ElementKind::LoopHeader && el.is_for) {
      loop_bounds(el, out);
    } else if (el.kind == ElementKind::LoopHeader && tok(el.tokens.first).is("while") &&
               tok(el.tokens.last).is(")")) {
      // `while (cond)` (not do's trailing while, which ends in ';')
      if (const auto c = parse(next(next(el.tokens.first)), prev(el.tokens.last)))
        bounds_from(*c, false, tok(el.tokens.first).line, out);
    }
  };
  // A braceless body's header, and that header's own where it is the
  // braceless body of another (`for (i ...) for (j ...) if (...) s;`).
  // (The grammar marks only the last statement of such a chain a braceless
  // body; a header before it awaits one.)
  const auto add_chain = [&](std::size_t from) {
    for (std::size_t b = from; b < elements_.size();) {
      const std::size_t h = prev_element(b);
      const bool body = k_.elements[elements_[b]].braceless_body ||
                        (h < elements_.size() && k_.elements[elements_[h]].awaits_braceless_body);
      if (!body || h >= elements_.size()) break;
      add_header(h);
      b = h;
    }
  };
  add_chain(at);
  int depth = 0;
  for (std::size_t i = at; i-- > 0;) {
    const grammar::Element& el = k_.elements[elements_[i]];
    if (el.kind == ElementKind::BlockClose) {
      // `if (cond) { return; }` before us: the code here runs where cond fails.
      const std::size_t r = prev_element(i), o = r < elements_.size() ? prev_element(r) : elements_.size();
      const std::size_t h = o < elements_.size() ? prev_element(o) : elements_.size();
      if (depth == 0 && h < elements_.size() && is_return(r) && k_.elements[elements_[o]].kind == ElementKind::BlockOpen &&
          k_.elements[elements_[h]].kind == ElementKind::IfHeader)
        if (const auto c = condition_of(k_.elements[elements_[h]]))
          bounds_from(*c, true, tok(k_.elements[elements_[h]].tokens.first).line, out, if_site(k_.elements[elements_[h]]));
      ++depth;
      continue;
    }
    if (el.kind == ElementKind::BlockOpen) {
      if (depth > 0) {
        --depth;
        continue;
      }
      // The block's header, and the headers whose braceless body that header is
      // (`for (a ...) for (b ...) { ... }`).
      add_header(prev_element(i));
      if (prev_element(i) < elements_.size()) add_chain(prev_element(i));
      continue;
    }
    // `if (cond) return;` before us.
    if (depth == 0 && is_return(i) && el.braceless_body) {
      const std::size_t h = prev_element(i);
      if (h < elements_.size() && k_.elements[elements_[h]].kind == ElementKind::IfHeader)
        if (const auto c = condition_of(k_.elements[elements_[h]]))
          bounds_from(*c, true, tok(k_.elements[elements_[h]].tokens.first).line, out, if_site(k_.elements[elements_[h]]));
    }
  }
  return out;
}

std::size_t Analyser::element_of(std::size_t token) const {
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    const grammar::Element& el = k_.elements[elements_[i]];
    if (el.tokens.first <= token && token <= el.tokens.last) return i;
  }
  return elements_.size();
}

// Which axes a guard bounds somewhere in the kernel (and whether x's is
// one gi cannot read), before any access is bounded: an axis no guard
// bounds is an exact launch's. The work item itself is still the first
// guard an access meets, as before, so the state is put back.
void Analyser::find_guarded_axes() {
  const auto work = work_[0], work_y = work_[1], work_z = work_[2];
  const std::string refusal = work_refusal_;
  const std::string variables[3] = {work_variable_[0], work_variable_[1], work_variable_[2]};
  const int flattened = flattened_line_;
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    auto guards = guards_at(i);
    if (const auto e = element_expression(k_.elements[elements_[i]]))
      every_test(*e, tok(k_.elements[elements_[i]].tokens.first).line, guards);
    note_work_item(guards);
  }
  for (int a = 0; a < 3; ++a) guarded_[a] = work_[a].has_value();
  if (work_[0]) x_bound_ = work_[0]->limit;
  unreadable_guard_ = !work_refusal_.empty();
  work_[0] = work, work_[1] = work_y, work_[2] = work_z;
  work_refusal_ = refusal;
  for (int a = 0; a < 3; ++a) work_variable_[a] = variables[a];
  flattened_line_ = flattened;
}

// Records the guard on a global index variable as the work item's bound.
void Analyser::note_work_item(const std::map<std::string, Bound>& guards) {
  for (const auto& [key, bound] : guards) {
    if (key.rfind(kUnreadable, 0) == 0) {
      const std::string name = key.substr(kUnreadable.size());
      const auto d = definition(name);
      if (work_refusal_.empty() && (name.rfind(kGlobalIndex, 0) == 0 || (d && global_index_axis(*d) >= 0)))
        work_refusal_ = bound.unreadable;
    }
  }
  for (const auto& [name, bound] : guards) {
    if (name.rfind(kUnreadable, 0) == 0 || name.rfind(kNotEqual, 0) == 0 || bound.one_value) continue;
    if (name.rfind(kGlobalIndex, 0) == 0) {
      const int axis = name.back() - '0';
      if (!work_[axis]) {
        work_[axis] = bound;
        work_variable_[axis] = std::string("global index ") + "xyz"[axis];
      }
      continue;
    }
    auto d = definition(name);
    if (!d)  // a while loop's counter that grows from the global index by the grid's stride
      if (const auto st = starts_.find(name); st != starts_.end()) d = parse(st->second.first, st->second.second);
    if (!d) continue;
    int axis = global_index_axis(*d);
    if (axis < 0 && d->kind == ExprKind::Name)  // a loop counter that starts at the global index
      if (const auto dd = definition(d->text)) axis = global_index_axis(*dd);
    if (axis < 0 || work_[axis]) continue;
    work_[axis] = bound;
    work_variable_[axis] = name;
  }
}

}  // namespace gi::analysis::detail

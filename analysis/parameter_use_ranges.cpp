// The Analyser's range evaluator (analysis/parameter_use_analyser.hpp): the
// range of a value under the guards in force, from its literals, macros,
// sizes, locals' definitions and the global thread index; + - * / % min
// max and ternaries on ranges; a local's value along straight-line code and
// in lockstep with a loop's counter; a __device__ helper's returned value.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/expression.hpp"
#include "analysis/linear_form.hpp"
#include "analysis/macro_expansion.hpp"
#include "analysis/parameter_use_analyser.hpp"
#include "analysis/straight_line_value.hpp"

namespace gi::analysis::detail {

std::optional<Range> Analyser::eval(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                                    int depth) const {
  if (depth > 16) {
    why = "the definitions go too deep";
    return std::nullopt;
  }
  switch (e.kind) {
    case ExprKind::Literal:
      if (const auto v = whole_literal(e)) return exact(SymbolicSize::constant(*v));
      if (const auto r = real_literal(e.text)) return r;
      why = "'" + e.text + "' is no whole number";
      return std::nullopt;
    case ExprKind::Name: {
      // Where the name's own reading fails, the counted for loop around the
      // read (one gi's elements do not see: a lambda's, or a counter several
      // loops share) bounds it.
      const std::string why_before = why;
      if (const auto r = name_range(e, guards, why, depth)) return r;
      std::string ignored;
      if (const auto r = counted_loop_range(e, guards, ignored, depth)) {
        why = why_before;
        return r;
      }
      return std::nullopt;
    }
    case ExprKind::Cast:
      return conversion(e, guards, why, depth);
    case ExprKind::Index:
      if (const auto r = narrow_load(e)) return r;
      // A load (a guard's limit `i < cindex[tid] / 32`): a value only the
      // data says, as an index from loaded data is.
      if (why.empty())
        why = "'" + expression_text(k_.tokens, e) + "' is read from memory: a value computed from loaded data";
      return std::nullopt;
    case ExprKind::Unary:
      // `k++` reads k; `++k` reads k + 1 (k as straight-line code leaves it here).
      if (e.children.size() == 1 && (e.text == "post++" || e.text == "post--"))
        return eval(e.children[0], guards, why, depth);
      if (e.children.size() == 1 && (e.text == "++" || e.text == "--")) {
        const auto a = eval(e.children[0], guards, why, depth);
        if (a && a->real) break;
        bool known = true;
        return a ? arithmetic("+", *a, exact(SymbolicSize::constant(e.text == "++" ? 1 : -1)), why, known)
                 : std::nullopt;
      }
      if (e.children.size() == 1 && (e.text == "-" || e.text == "+")) {
        const auto a = eval(e.children[0], guards, why, depth);
        if (!a) return std::nullopt;
        if (e.text == "+") return a;
        if (!a->hi || a->real) break;
        return Range{*a->hi * SymbolicSize::constant(-1), a->lo * SymbolicSize::constant(-1)};
      }
      break;
    case ExprKind::Ternary: {
      // `x < a ? a : (x > b ? b : x)`: each side under what its test says of x.
      if (e.children.size() != 3) break;
      std::map<std::string, Bound> yes = guards, no = guards;
      refine(e.children[0], yes, no);
      const auto t = eval(e.children[1], yes, why, depth), f = eval(e.children[2], no, why, depth);
      if (!t || !f || !t->hi || !f->hi) return std::nullopt;
      const auto both = either(*t, *f);
      if (!both) why = "gi cannot order the two sides of '" + expression_text(k_.tokens, e) + "'";
      return both;
    }
    case ExprKind::Call: {
      if (const auto m = symbols_.function_macros.find(e.callee()); m != symbols_.function_macros.end()) {
        const auto expanded = expand_macro_call(e, m->first, m->second, why);
        return expanded ? eval(*expanded, guards, why, depth + 1) : std::nullopt;
      }
      if (is_rounding(e)) return conversion(e, guards, why, depth);
      if (const auto r = helper_value(e, guards, why, depth)) return r;
      // min/max: what clamps write (min(max(x + dx, 0), width - 1)).
      const std::string f = e.callee();
      const bool float_min = f == "fminf" || f == "fmin", float_max = f == "fmaxf" || f == "fmax";
      const bool is_min = f == "min" || f == "std::min" || f == "umin" || f == "imin" || float_min;
      const bool is_max = f == "max" || f == "std::max" || f == "umax" || f == "imax" || float_max;
      if ((!is_min && !is_max) || e.children.size() != 3) break;
      std::string ignored;
      const auto a = eval(e.children[1], guards, ignored, depth), b = eval(e.children[2], guards, ignored, depth);
      if ((a && a->real) || (b && b->real) || float_min || float_max) {
        const auto r = real_extremum(is_min, a, b);
        if (!r && why.empty())
          why = "'" + expression_text(k_.tokens, e) + "': gi cannot order its operands' ends";
        return r;
      }
      const auto is_exact = [](const std::optional<Range>& r) { return r && r->hi && *r->hi == r->lo; };
      const auto at_least = [](const SymbolicSize& x, const SymbolicSize& y) { return (x - y).non_negative(); };
      Range out;
      if (is_min) {
        // min(a, b) <= either side; >= 0 when both are.
        if (is_exact(b)) out.hi = b->lo;
        else if (is_exact(a)) out.hi = a->lo;
        else if (a && b && a->hi && b->hi)
          out.hi = at_least(*b->hi, *a->hi) ? a->hi : at_least(*a->hi, *b->hi) ? b->hi : std::nullopt;
        if (!(a && b && a->lo.non_negative_for_sizes() && b->lo.non_negative_for_sizes())) {
          why = "'" + expression_text(k_.tokens, e) + "' may be negative";
          return std::nullopt;
        }
        out.lo = a->lo.non_negative() ? (b->lo.non_negative() && at_least(a->lo, b->lo) ? b->lo : a->lo) : SymbolicSize();
        if (!b->lo.non_negative() || !a->lo.non_negative()) out.lo = SymbolicSize();
      } else {
        // max(a, b) >= either side; <= the larger bound.
        if (is_exact(b) && b->lo.non_negative()) out.lo = b->lo;
        else if (is_exact(a) && a->lo.non_negative()) out.lo = a->lo;
        else if (!(a && b && a->lo.non_negative() && b->lo.non_negative())) {
          why = "'" + expression_text(k_.tokens, e) + "' may be negative";
          return std::nullopt;
        }
        if (a && b && a->hi && b->hi)
          out.hi = at_least(*a->hi, *b->hi) ? a->hi : at_least(*b->hi, *a->hi) ? b->hi : std::nullopt;
        // Neither provably the larger (max(x - 1, 0) under x < n: n - 2 or
        // 0): one below the larger count they need, a max of sizes where
        // one of them is at least 1 (SymbolicSize::max_of).
        const SymbolicSize one = SymbolicSize::constant(1);
        if (!out.hi && a && b && a->hi && b->hi && (a->hi->non_negative() || b->hi->non_negative()))
          out.hi = SymbolicSize::max_of(*a->hi + one, *b->hi + one) - one;
      }
      return out;
    }
    case ExprKind::Member:
      // A vector local's component (`ante.x` of `int2 ante = {...}`): under
      // a guard on it, else its definition's range.
      if (const auto r = guarded_expression(e, guards, why, depth)) return r;
      if (const auto c = component_definition(e)) return eval(*c, guards, why, depth + 1);
      // Under a guard on it (`if (threadIdx.x < 9)`): below the guard's limit.
      if (const auto g = guards.find(thread_key(e)); g != guards.end() && !thread_key(e).empty())
        return Range{SymbolicSize(), g->second.limit - SymbolicSize::constant(1)};
      // In a block's own memory: threadIdx.x below the block size B, blockDim.x B.
      if (block_symbols_ && !e.children.empty() && e.field == "x") {
        if (e.children[0].is_name("threadIdx")) return Range{SymbolicSize(), SymbolicSize::name("B") - SymbolicSize::constant(1)};
        if (e.children[0].is_name("blockDim")) return exact(SymbolicSize::name("B"));
      }
      // The block gi init launches is (B, 1, 1) (spec_scaffold): in a kernel
      // written for such blocks, one that never reads threadIdx.y or .z,
      // blockDim.y and .z are 1 (NiftyReg's `&s[4 * blockDim.x * blockDim.y
      // * blockDim.z]`, a second array after a first of 4 per thread). A
      // kernel written for 4 x 4 x 4 blocks keeps them unbounded.
      if (block_symbols_ && !reads_thread_yz_ && !e.children.empty() && (e.field == "y" || e.field == "z") &&
          e.children[0].is_name("blockDim"))
        return exact(SymbolicSize::constant(1));
      // Under a guard on the global index x, in the kernel's own body, the
      // launch's extents on x are those gi launches, with the block size
      // fixed (WorkItem::fixed_block_line, at the block the global index is
      // written for, else kFixedBlock) so that a buffer's length and
      // contents do not change with tuning:
      //  - blockIdx.x alone (one element per block, a two-pass reduction's
      //    partial sums): below the grid's blocks, ceil_div(bound, block);
      //  - gridDim.x: that grid exactly (srad's `nf = NT - (gridDim.x * NT -
      //    d_no)`, the items of the last block);
      //  - blockDim.x: the block (Rodinia's dwt2d copies a block's bytes
      //    through a float view, `s[(blockDim.x * blockIdx.x >> 2) + x]`),
      //    and threadIdx.x, in a block so fixed, below it.
      if (!helper_ && !block_symbols_ && x_bound_ && !e.children.empty() && e.field == "x") {
        const long long block = written_block_ ? written_block_ : kFixedBlock;
        // A read that fixes the block marks the line the spec's note names.
        const auto fixed_block = [&] {
          if (per_block_line_ == 0) per_block_line_ = tok(e.first).line;
          return SymbolicSize::constant(block);
        };
        if (e.children[0].is_name("blockIdx"))
          return Range{SymbolicSize(), SymbolicSize::ceil_div(*x_bound_, fixed_block()) - SymbolicSize::constant(1)};
        if (e.children[0].is_name("gridDim")) return exact(SymbolicSize::ceil_div(*x_bound_, fixed_block()));
        if (e.children[0].is_name("blockDim")) return exact(fixed_block());
        if (e.children[0].is_name("threadIdx") && (per_block_line_ > 0 || written_block_ > 0))
          return Range{SymbolicSize(), SymbolicSize::constant(block - 1)};
      }
      // gridDim with no guard on the global index of its axis: the grid is
      // one launch.grid leaves to the user, and so is any index over it.
      if (!helper_ && !block_symbols_ && !e.children.empty() && e.children[0].is_name("gridDim") &&
          !guarded_[e.field == "x" ? 0 : e.field == "y" ? 1 : 2]) {
        if (why.empty())
          why = "'gridDim." + e.field + "' is the grid's extent, and no guard on the global index " + e.field +
                " names its bound (launch.grid is the user's to give)";
        return std::nullopt;
      }
      // blockIdx.y alone: a row of blocks per item, the global index y.
      if (const int axis = e.children.empty() || !e.children[0].is_name("blockIdx") ? -1 : global_index_axis(e);
          axis > 0)
        return global_index_range(axis, e, guards);
      if (!e.children.empty() && (e.children[0].is_name("threadIdx") || e.children[0].is_name("blockIdx")))
        return Range{SymbolicSize(), std::nullopt};
      if (!e.children.empty() && e.children[0].kind == ExprKind::Name && e.text == ".") {
        // A struct's whole-number member (p.n), or an integer vector's component (dim.x): a size.
        if (const auto r = record_sizes_.find(e.children[0].text); r != record_sizes_.end() && r->second.count(e.field))
          return exact(SymbolicSize::name(record_member_name(r->first, e.field)));
        if (const auto c = component_size(e, vectors_)) return exact(SymbolicSize::name(*c));
      }
      if (!e.children.empty() && e.children[0].kind == ExprKind::Name)  // c_ImageDim.x
        if (const std::string c = constant_refusal(e.children[0].text); !c.empty()) {
          if (why.empty()) why = c;
          return std::nullopt;
        }
      break;
    case ExprKind::Binary: {
      if (const int axis = global_index_axis(e); axis >= 0) return global_index_range(axis, e, guards);
      if (e.children.size() != 2) break;
      if (e.text == "+" || e.text == "-")
        if (const auto r = guarded_expression(e, guards, why, depth)) return r;
      if (e.text == "-")
        if (const auto r = remainder_value(e.children[0], e.children[1], e.first, guards, depth)) return r;
      if (const auto r = e.text == "+" ? sum_below_twice(e, guards, depth) : std::nullopt) return r;
      const auto a = eval(e.children[0], guards, why, depth);
      if (!a) return std::nullopt;
      auto b = e.text == "/" ? real_divisor(e.children[1]) : std::nullopt;
      if (!b) b = eval(e.children[1], guards, why, depth);
      if (!b) return std::nullopt;
      bool known = true;
      if (const auto r = arithmetic(e.text, *a, *b, why, known); r || known) return r;
      break;
    }
    default:
      break;
  }
  if (why.empty()) why = "'" + expression_text(k_.tokens, e) + "' is not arithmetic gi can bound";
  return std::nullopt;
}

// A name's range: a macro, a real, a guard's, a helper's argument, a
// local's definition or path value, a size.
std::optional<Range> Analyser::name_range(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                                         int depth) const {
  // `#define BLOCK_SIZE 16`: the macro is its value wherever it stands.
  if (const auto m = symbols_.integer_macros.find(e.text); m != symbols_.integer_macros.end())
    return exact(SymbolicSize::constant(m->second.value));
  if (reals_.count(e.text)) return real_name(e.text, guards, why);
  const auto g = guards.find(e.text);
  const auto low = guards.find(kLowerBound + e.text);
  if (g != guards.end() && low != guards.end())  // a clamp's branch: both ends known
    return Range{low->second.limit, g->second.limit - SymbolicSize::constant(1)};
  if (const auto a = arguments_.find(e.text); a != arguments_.end()) {
    // A helper's parameter: the caller's argument, where it could say.
    if (a->second) return a->second;
    if (why.empty()) why = "the argument for '" + e.text + "' has no range gi can see";
    return std::nullopt;
  }
  std::optional<Range> own;
  std::string inner;  // why its definition has no range, under a guard
  // A local assigned more than once: the value straight-line code
  // gives it at this read (`out[k++]` after `k = tid * 4`), if any.
  std::string path_why;
  const auto path = assigned_once_.count(e.text) ? std::nullopt
                                                 : straight_line_value(k_, fn_, e.text, e.first, path_why);
  const auto path_value = path ? parse(path->first, path->last) : std::nullopt;
  const auto st = starts_.find(e.text);
  if (path_value) {
    const std::string why_before = why;
    own = along_path(*path, *path_value, without(guards, e.text), g == guards.end() ? why : inner, depth + 1);
    // Below 0 on its own, but a loop steps it in lockstep with a local a
    // guard bounds here (analysis/parameter_use_partner.cpp).
    if (g == guards.end() && (!own || !own->lo.non_negative_for_sizes()))
      if (const auto r = partner_value(*path, e.first, guards, depth + 1)) {
        own = r;
        why = why_before;
      }
  } else if (st != starts_.end() && g != guards.end()) {
    // A growing counter under a guard: from its start up to the guard.
    if (!steps_grow(e.text, guards, inner, depth)) return std::nullopt;
    if (const auto d = parse(st->second.first, st->second.second))
      if (const auto r = eval(*d, without(guards, e.text), inner, depth + 1))
        own = Range{r->lo, std::nullopt};
  } else if (st != starts_.end()) {
    // A counter that grows (a loop's) under a guard whose limit differs
    // per thread: from its start up to the limit's largest value here.
    const auto u = guards.find(kUnreadable + e.text);
    if (u != guards.end() && u->second.limit_last > 0 && steps_grow(e.text, guards, why, depth))
      if (const auto limit = parse(u->second.limit_first, u->second.limit_last)) {
        std::string ignored;
        const auto l = eval(*limit, without(guards, e.text), ignored, depth + 1);
        const auto d = parse(st->second.first, st->second.second);
        const auto start = d ? eval(*d, without(guards, e.text), ignored, depth + 1) : std::nullopt;
        if (l && l->hi && start)  // a negative start is the caller's to refuse (`in[j + 1]`)
          return Range{start->lo, u->second.inclusive ? *l->hi : *l->hi - SymbolicSize::constant(1)};
      }
    // Else its start is only its lowest value.
    if (why.empty())
      why = u != guards.end()      ? u->second.unreadable
            : !path_why.empty() && !loop_counters_.count(e.text) ? path_why
                                : "'" + e.text + "' grows from its start and no guard gi can read bounds it";
    return std::nullopt;
  } else if (const auto d = definition(e.text)) {
    own = eval(*d, g == guards.end() ? guards : without(guards, e.text), g == guards.end() ? why : inner,
               depth + 1);
    // A loop's counter starts at its init: that is its largest value
    // only where the loop counts down; else with no bound here (read
    // after the loop, or under a condition gi cannot read) it has none.
    if (own && g == guards.end() && loop_counters_.count(e.text) && !counts_down_.count(e.text)) {
      if (why.empty()) why = "'" + e.text + "' is a loop's counter, and no bound of the loop holds here";
      own.reset();
    }
  } else if (!path && !path_why.empty() && !loop_counters_.count(e.text)) {
    own = joined_value(e.text, depth + 1);
  }
  // `index == -1` failed: an end at -1 moves past it.
  if (const auto ne = guards.find(kNotEqual + e.text); own && ne != guards.end()) {
    const SymbolicSize one = SymbolicSize::constant(1);
    if (own->lo == ne->second.limit && !own->real) own->lo = own->lo + one;
    else if (own->hi && *own->hi == ne->second.limit && !own->real) own->hi = *own->hi - one;
  }
  if (own && g == guards.end() && low != guards.end()) {
    // A guard's lower bound (`x >= 0 &&`, or where `if (l < 0) l = 0;`
    // did not assign): it and the definition's are both lower ends;
    // the larger, or the one that is never negative.
    if ((low->second.limit - own->lo).non_negative_for_sizes() ||
        (!own->lo.non_negative_for_sizes() && low->second.limit.non_negative_for_sizes()))
      own->lo = low->second.limit;
  }
  if (g != guards.end()) {
    // The guard gives the upper end; the lower end is the definition's.
    if (!own || !own->lo.non_negative_for_sizes()) {
      if (why.empty())
        why = !own && !inner.empty() ? "'" + e.text + "': its definition: " + inner
                                     : "'" + e.text + "' may be negative";
      return std::nullopt;
    }
    return Range{own->lo, g->second.limit - SymbolicSize::constant(1)};
  }
  if (own) return own;
  if (scalars_.count(e.text)) return exact(SymbolicSize::name(e.text));
  if (const std::string c = constant_refusal(e.text); !c.empty()) {
    if (why.empty()) why = c;
    return std::nullopt;
  }
  if (const auto m = symbols_.macro_refusals.find(e.text); m != symbols_.macro_refusals.end()) {
    if (why.empty()) why = m->second;
    return std::nullopt;
  }
  if (why.empty()) why = path_why.empty() ? "nothing bounds '" + e.text + "'" : path_why;
  return std::nullopt;
}

bool Analyser::guardable(const Expr& e) const {
  if (e.kind == ExprKind::Member) return component_definition(e).has_value();
  if (e.kind != ExprKind::Binary || (e.text != "+" && e.text != "-") || global_index_axis(e) >= 0) return false;
  for (const auto& [text, term] : linear_form(k_.tokens, e).terms)
    if (term.atom.kind == ExprKind::Name || term.atom.kind == ExprKind::Member) return true;
  return false;
}

// `(ante.y + b) * nx + ante.x + a` under `-1 < ante.x + a && ante.x + a <
// nx`: as linear forms, the index holds the guarded expression's terms with
// their coefficients; the guard bounds those, and the rest (here the row's
// term) is evaluated as ever. The guard's lower end is its own (`-1 <`),
// else the guarded expression's.
std::optional<Range> Analyser::guarded_expression(const Expr& e, const std::map<std::string, Bound>& guards,
                                                  std::string& why, int depth) const {
  // The guards on expressions in force here: their keys stand together in the map.
  const auto on_expression = [](const auto& it) { return it->first.rfind(kExpression, 0) == 0; };
  auto it = guards.lower_bound(kExpression);
  if (it == guards.end() || !on_expression(it)) return std::nullopt;
  const LinearForm whole = linear_form(k_.tokens, e);
  for (; it != guards.end() && on_expression(it); ++it) {
    const auto subject = guarded_subjects_.find(it->first);
    if (subject == guarded_subjects_.end()) continue;
    const LinearForm part = linear_form(k_.tokens, subject->second);
    bool holds = true;
    for (const auto& [text, term] : part.terms) {
      const auto w = whole.terms.find(text);
      holds = holds && w != whole.terms.end() && w->second.coefficient == term.coefficient;
    }
    if (!holds) continue;
    const std::string& key = it->first;
    std::optional<SymbolicSize> lo;
    if (const auto low = guards.find(kLowerBound + key); low != guards.end()) lo = low->second.limit;
    else if (const auto own = eval(subject->second, without(guards, key), why, depth + 1)) lo = own->lo;
    if (!lo) return std::nullopt;
    LinearForm rest = whole;
    rest.add(part, -1);
    const auto others = eval_linear(rest, guards, why, depth);
    if (!others) return std::nullopt;
    return plus(Range{*lo, it->second.limit - SymbolicSize::constant(1)}, *others);
  }
  return std::nullopt;
}

// Whether each `name += e` by an expression (sized_steps_) steps it up:
// e built of the launch's dimensions (`k += blockDim.x`, or a local holding
// blockDim.x * gridDim.x), or >= 0 under the
// guards here (`i += increment`, increment a product of sizes). Else `why`
// says which step may not.
bool Analyser::steps_grow(const std::string& name, const std::map<std::string, Bound>& guards, std::string& why,
                          int depth) const {
  const auto steps = sized_steps_.find(name);
  if (steps == sized_steps_.end()) return true;
  for (const auto& [first, last] : steps->second) {
    const auto step = parse(first, last);
    if (step && only_builtins(with_thread_locals(*step))) continue;
    std::string ignored;
    const auto r = step ? eval(*step, without(guards, name), ignored, depth + 1) : std::nullopt;
    if (!r || r->real || !r->lo.non_negative_for_sizes()) {
      if (why.empty())
        why = "'" + name + "' steps by '" + (step ? expression_text(k_.tokens, *step) : std::string("?")) + "', " +
              (r && !r->real ? "which may be negative" : "which gi cannot bound");
      return false;
    }
  }
  return true;
}

// Each `name = RHS` (its declaration's too) evaluated under the guards
// where it stands; refused where one is missing a value gi can bound, reads
// the name itself, or where the name is also updated otherwise (`+=`, `++`).
std::optional<Range> Analyser::joined_value(const std::string& name, int depth) const {
  if (const auto known = joined_.find(name); known != joined_.end()) return known->second;
  if (!joining_.insert(name).second) return std::nullopt;
  const auto out = join_assignments(name, depth);
  joining_.erase(name);
  joined_[name] = out;
  return out;
}

std::optional<Range> Analyser::join_assignments(const std::string& name, int depth) const {
  std::string why;  // the read's own refusal stands: no reason is given for the join
  std::optional<Range> out;
  int plain = 0;
  bool declared = false;
  for (std::size_t t = body_first_; t <= body_last_; ++t) {
    if (tok(t).kind != TokenKind::Identifier || tok(t).text != name || !tok(next(t)).is("=") ||
        tok(prev(t)).is(".") || tok(prev(t)).is("->"))
      continue;
    const std::size_t at = element_of(t);
    if (at >= elements_.size()) return std::nullopt;
    declared = declared || k_.elements[elements_[at]].kind == ElementKind::Declaration;
    const std::size_t start = next(next(t));
    const auto value = parse(start, expression_end(start));
    if (!value) return std::nullopt;
    for (const std::string& n : names_in(*value))
      if (n == name) return std::nullopt;
    const auto r = eval(*value, guards_at(at), why, depth + 1);
    if (!r) return std::nullopt;
    out = out ? either(*out, *r) : r;
    if (!out) return std::nullopt;
    ++plain;
  }
  const auto assigned = assigned_count_.find(name);
  if (!declared || assigned == assigned_count_.end() || assigned->second != plain) return std::nullopt;
  return out;
}

// `a + b` under a guard `a < b` (or `a <= b`) whose b is a range, not one
// value (a tree reduction's stride s, from B/2 down): a + b <= 2 b - 1, so
// with s <= B/2 the partner index `tid + s` stays below B. Bounding a and b
// apart would give 1.5 B.
std::optional<Range> Analyser::sum_below_twice(const Expr& e, const std::map<std::string, Bound>& guards,
                                               int depth) const {
  for (int side = 0; side < 2; ++side) {
    const Expr& a = e.children[side];
    const Expr& b = e.children[1 - side];
    const std::string key = a.kind == ExprKind::Name ? a.text : thread_key(a);
    if (key.empty()) continue;
    const auto g = guards.find(kUnreadable + key);
    if (g == guards.end() || g->second.limit_last == 0) continue;
    const auto limit = parse(g->second.limit_first, g->second.limit_last);
    if (!limit || expression_text(k_.tokens, *limit) != expression_text(k_.tokens, b)) continue;
    std::string ignored;
    const auto ra = eval(a, without(guards, key), ignored, depth + 1);
    const auto rb = eval(b, guards, ignored, depth + 1);
    if (!ra || !rb || !rb->hi || ra->real || rb->real || !ra->lo.non_negative_for_sizes() || !rb->lo.non_negative_for_sizes()) continue;
    const SymbolicSize most = *rb->hi * SymbolicSize::constant(2) -
                              SymbolicSize::constant(g->second.inclusive ? 0 : 1);
    return Range{ra->lo + rb->lo, most};
  }
  return std::nullopt;
}

// The global index on an axis: below its guard's bound; with no guard on
// the axis anywhere, below the exact launch's thread count.
std::optional<Range> Analyser::global_index_range(int axis, const Expr& e,
                                                  const std::map<std::string, Bound>& guards) const {
  const auto g = guards.find(kGlobalIndex + std::to_string(axis));
  if (g != guards.end()) return Range{SymbolicSize(), g->second.limit - SymbolicSize::constant(1)};
  if (!helper_ && !guarded_[axis] && (axis > 0 || !unreadable_guard_)) {
    if (exact_line_[axis] == 0) exact_line_[axis] = tok(e.first).line;
    return Range{SymbolicSize(), SymbolicSize::name(exact_names_[axis]) - SymbolicSize::constant(1)};
  }
  return Range{SymbolicSize(), std::nullopt};
}

// a OP b for + - * / %: nullopt with `known` false where the operator or
// its operands are beyond what gi bounds (minus or divided by a range,
// a product of possibly negative values); with `known` true and `why`
// set where it is one of them but the result has no bound gi can write.
// a + b: both ends add; no upper end where either has none.
Range Analyser::plus(const Range& a, const Range& b) {
  std::string ignored;
  if (a.real || b.real) return *real_arithmetic("+", a, b, ignored);
  return Range{a.lo + b.lo, a.hi && b.hi ? std::optional<SymbolicSize>(*a.hi + *b.hi) : std::nullopt};
}

std::optional<Range> Analyser::arithmetic(const std::string& op, const Range& a, const Range& b, std::string& why,
                                          bool& known) {
  known = false;
  if (a.real || b.real) {
    known = true;
    return real_arithmetic(op, a, b, why);
  }
  if (op == ">>" || op == "<<" || op == "&") {
    const auto r = shifted_or_masked(op, a, b);
    known = r.has_value();
    return r;
  }
  const auto both = [&](auto f) -> std::optional<SymbolicSize> {
    if (!a.hi || !b.hi) return std::nullopt;
    return f(*a.hi, *b.hi);
  };
  const bool b_exact = b.hi && *b.hi == b.lo;
  if (op == "+") return plus(a, b);
  if (op == "-" && b_exact)
    return Range{a.lo - b.lo, a.hi ? std::optional<SymbolicSize>(*a.hi - b.lo) : std::nullopt};
  // Minus a range: its largest value gives the least result (`i - 1 - bx`).
  if (op == "-" && b.hi) return Range{a.lo - *b.hi, a.hi ? std::optional<SymbolicSize>(*a.hi - b.lo) : std::nullopt};
  // Sizes are at least 1, so `nx - 1` is a factor at least 0 as `nx` is.
  if (op == "*" && a.lo.non_negative_for_sizes() && b.lo.non_negative_for_sizes())
    return Range{a.lo * b.lo, both([](auto x, auto y) { return x * y; })};
  if ((op == "/" || op == "%") && b_exact && a.lo.non_negative_for_sizes()) {
    const SymbolicSize d = b.lo;
    if (op == "%") return Range{SymbolicSize(), d - SymbolicSize::constant(1)};
    if (!a.hi) return Range{SymbolicSize(), std::nullopt};
    if (const auto q = (*a.hi + SymbolicSize::constant(1)).divided_by(d))
      return Range{SymbolicSize(), *q - SymbolicSize::constant(1)};
    // Not exact: a / d <= ceil_div(hi + 1, d) - 1 for a divisor of one
    // positive term (a size, a product of sizes, a whole number).
    if (d.is_monomial() && d.non_negative() && !(d == SymbolicSize()))
      return Range{SymbolicSize(), SymbolicSize::ceil_div(*a.hi + SymbolicSize::constant(1), d) -
                                       SymbolicSize::constant(1)};
    known = true;
    why = "(" + a.hi->text() + " + 1) / (" + d.text() + ") is not exact";
  }
  return std::nullopt;
}

// A local's value from straight-line code: its definition, then each
// update on the way to the read (`k *= 4`, `k++`) in program order.
std::optional<Range> Analyser::along_path(const StraightLineValue& path, const Expr& definition,
                                          const std::map<std::string, Bound>& guards, std::string& why,
                                          int depth) const {
  for (const StraightLineUpdate& u : path.updates)
    if (u.counter) {
      if (path.conditional()) {
        why = "line " + std::to_string(path.line) + " assigns it under a condition, and a loop steps it";
        return std::nullopt;
      }
      return along_loop_path(path, definition, guards, why, depth);
    }
  auto value = path.conditional() ? conditional_value(path, definition, guards, why, depth)
                                   : eval(definition, guards, why, depth);
  for (const StraightLineUpdate& u : path.updates) {
    if (!value) return std::nullopt;
    std::optional<Range> operand = exact(SymbolicSize::constant(u.amount));
    if (u.first <= u.last) {
      const auto e = parse(u.first, u.last);
      // `t -= z * nx * ny` with z = t / (nx * ny): t becomes t % (nx * ny).
      // Its name is two tokens before the operand (`t -=`).
      if (e && u.op == '-' && !value->real) {
        Expr name;
        name.kind = ExprKind::Name;
        name.text = path.name;
        name.first = name.last = prev(prev(u.first));
        if (const auto r = remainder_value(name, *e, name.first, guards, depth, value)) {
          value = r;
          continue;
        }
      }
      operand = e ? eval(*e, guards, why, depth) : std::nullopt;
      if (!operand) return std::nullopt;
    }
    bool known = true;
    value = arithmetic(std::string(1, u.op), *value, *operand, why, known);
    if (!value && why.empty())
      why = "line " + std::to_string(u.line) + " updates it by what gi cannot bound (" + u.op + "=)";
  }
  return value;
}

// Both ends of two ranges a value may lie in (the sides of a ternary or of a
// conditional assignment). Sizes are at least 1, so `last - 1` and `last`
// are ordered. Where no ordering decides: 0 below two ends that are never
// negative, and above, max(a + 1, b + 1) - 1 where one end is never
// negative (so that the max, a size, is at least 1); else nullopt.
std::optional<Range> Analyser::either(const Range& a, const Range& b) {
  if (!a.hi || !b.hi) return std::nullopt;
  const SymbolicSize one = SymbolicSize::constant(1);
  const auto least = (a.lo - b.lo).non_negative_for_sizes()   ? b.lo
                     : (b.lo - a.lo).non_negative_for_sizes() ? a.lo
                     : a.lo.non_negative_for_sizes() && b.lo.non_negative_for_sizes()
                         ? SymbolicSize::constant(0)
                         : std::optional<SymbolicSize>();
  const auto most = (*a.hi - *b.hi).non_negative_for_sizes()   ? *a.hi
                    : (*b.hi - *a.hi).non_negative_for_sizes() ? *b.hi
                    : a.hi->non_negative_for_sizes() || b.hi->non_negative_for_sizes()
                        ? SymbolicSize::max_of(*a.hi + one, *b.hi + one) - one
                        : std::optional<SymbolicSize>();
  if (!least || !most) return std::nullopt;
  Range r{*least, *most};
  r.real = a.real || b.real;
  r.strict = a.strict && b.strict;  // strictly below the larger end only where both are
  return r;
}

// `if (C) name = A;` (with or without `else name = B;`): A under what C
// says, and where C fails B or the value before the if, under what C's
// failing says of it: `int l = i - 1; if (l < 0) l = 0;` is 0, or i - 1 at
// least 0. As a ternary `C ? A : (B or the name before)`.
std::optional<Range> Analyser::conditional_value(const StraightLineValue& path, const Expr& if_value,
                                                 const std::map<std::string, Bound>& guards, std::string& why,
                                                 int depth) const {
  const auto test = parse(path.condition_first, path.condition_last);
  if (!test) {
    why = "line " + std::to_string(path.line) + ": gi cannot read the condition it is assigned under";
    return std::nullopt;
  }
  std::map<std::string, Bound> yes = guards, no = guards;
  refine(*test, yes, no);
  auto value = eval(if_value, yes, why, depth + 1);
  // An else-if chain's links: each where every test before it failed.
  for (const StraightLineValue::Link& link : path.chain) {
    const auto link_test = parse(link.condition_first, link.condition_last);
    const auto assigned = parse(link.first, link.last);
    if (!link_test || !assigned) {
      why = "line " + std::to_string(path.line) + ": gi cannot read a link of the else-if chain that assigns it";
      return std::nullopt;
    }
    std::map<std::string, Bound> link_yes = no, link_no = no;
    refine(*link_test, link_yes, link_no);
    const auto t = eval(*assigned, link_yes, why, depth + 1);
    value = value && t ? either(*value, *t) : std::nullopt;
    no = link_no;
  }
  std::optional<Expr> otherwise;
  if (path.has_else()) {
    otherwise = parse(path.else_first, path.else_last);
  } else {
    otherwise = Expr{};  // the name, read where the if starts: its value before it
    otherwise->kind = ExprKind::Name;
    otherwise->text = path.name;
    otherwise->first = otherwise->last = path.before;
  }
  if (!otherwise) return std::nullopt;
  const auto f = eval(*otherwise, no, why, depth + 1);
  if (!value || !f) return std::nullopt;
  const auto both = either(*value, *f);
  if (!both && why.empty())
    why = "line " + std::to_string(path.line) + ": gi cannot order the values it may hold on either side of its condition";
  return both;
}

// A value that a loop around the read steps in lockstep with its counter
// v from s: the definition, each step, and d * (v - s) for the passes
// before this one, summed as one linear form (analysis/linear_form.hpp)
// so that a name in both the definition and s cancels: `jacIndex = base +
// x - 1` stepped by `for (pixelX = x - 1; ...)` is base + pixelX, and
// pixelX's guards bound it. A name that stands in two of these parts must
// hold one value throughout (assigned at most once), or the parts would
// mean different values by one name.
std::optional<Range> Analyser::along_loop_path(const StraightLineValue& path, const Expr& definition,
                                               const std::map<std::string, Bound>& guards, std::string& why,
                                               int depth) const {
  LinearForm sum = linear_form(k_.tokens, definition);
  std::map<std::string, int> parts_naming;  // name -> how many parts name it
  const auto note = [&](const Expr& e) {
    std::set<std::string> mine;
    for (const std::string& n : names_in(e)) mine.insert(n);
    for (const std::string& n : mine) ++parts_naming[n];
  };
  note(definition);
  std::vector<Range> products;  // steps by a size: d * (v - s) as ranges
  for (const StraightLineUpdate& u : path.updates) {
    const std::string where = "line " + std::to_string(u.line);
    if (u.op == '*') {
      why = where + " multiplies it (*=), and a loop steps it";
      return std::nullopt;
    }
    const long long sign = u.op == '-' ? -1 : 1;
    std::optional<Expr> operand;
    if (u.first <= u.last && !(operand = parse(u.first, u.last))) {
      why = where + ": gi cannot read its step";
      return std::nullopt;
    }
    // The step as a whole number, where it is one.
    LinearForm step;
    step.constant = u.amount;
    if (operand) {
      step = linear_form(k_.tokens, *operand);
      note(*operand);
    }
    const bool whole = step.terms.empty();
    const long long amount = step.constant;
    if (!u.counter) {
      if (operand) sum.add(step, sign);
      else sum.constant += sign * u.amount;
      continue;
    }
    if (u.after_loop) {
      // A loop before the read: d times its passes, in [0, max(0, e - s)].
      const auto passes = loop_passes(u, guards, why, depth);
      const auto d = passes ? (operand ? eval(*operand, guards, why, depth)
                                       : std::optional<Range>(exact(SymbolicSize::constant(amount))))
                            : std::nullopt;
      if (!d) return std::nullopt;
      bool known = true;
      const auto product = sign > 0 && !d->real && d->lo.non_negative_for_sizes() ? arithmetic("*", *d, *passes, why, known)
                           : sign < 0 && !d->real && whole && amount >= 0
                               ? std::optional<Range>(Range{*passes->hi * SymbolicSize::constant(-amount), SymbolicSize()})
                               : std::nullopt;
      if (!product) {
        if (why.empty()) why = where + " steps it in a loop by what may be negative";
        return std::nullopt;
      }
      products.push_back(*product);
      continue;
    }
    const auto v = parse(u.counter, u.counter), start = parse(u.start_first, u.start_last);
    if (!v || !start) {
      why = where + ": gi cannot read the loop's counter";
      return std::nullopt;
    }
    note(*start);
    LinearForm passes = linear_form(k_.tokens, *v);
    passes.add(linear_form(k_.tokens, *start), -1);
    if (whole) {
      sum.add(passes, sign * amount);
      continue;
    }
    // A step by a size (`offset += cols`): both factors at least 0.
    const auto d = eval(*operand, guards, why, depth);
    const auto n = d ? eval_linear(passes, guards, why, depth) : std::nullopt;
    if (!d || !n) return std::nullopt;
    bool known = true;
    const auto product = sign > 0 && d->lo.non_negative() && n->lo.non_negative()
                             ? arithmetic("*", *d, *n, why, known)
                             : std::nullopt;
    if (!product) {
      if (why.empty()) why = where + " steps it by '" + expression_text(k_.tokens, *operand) + "', which may be negative";
      return std::nullopt;
    }
    products.push_back(*product);
  }
  for (const auto& [name, parts] : parts_naming)
    if (parts > 1 && assigned_count_.count(name) && assigned_count_.at(name) > 1) {
      why = "'" + name + "' is assigned more than once, and both the value and its loop's start name it";
      return std::nullopt;
    }
  auto value = eval_linear(sum, guards, why, depth);
  for (const Range& p : products) {
    if (!value) break;
    bool known = true;
    value = arithmetic("+", *value, p, why, known);
  }
  return value;
}

// How many passes a for loop before the read made (StraightLineUpdate::
// after_loop): from 0 to e - s, or to max(0, e - s) where sizes may make
// e - s negative (`k < nz - 1` from 1: max(nz, 2) - 2).
std::optional<Range> Analyser::loop_passes(const StraightLineUpdate& u, const std::map<std::string, Bound>& guards,
                                           std::string& why, int depth) const {
  const auto end = parse(u.end_first, u.end_last), start = parse(u.start_first, u.start_last);
  const auto e = end ? eval(*end, guards, why, depth + 1) : std::nullopt;
  const auto s = e && start ? eval(*start, guards, why, depth + 1) : std::nullopt;
  if (!s || e->real || s->real || !e->hi) {
    if (why.empty()) why = "line " + std::to_string(u.line) + ": gi cannot count the passes of the loop that steps it";
    return std::nullopt;
  }
  const SymbolicSize one = SymbolicSize::constant(1);
  const SymbolicSize most = *e->hi + (u.end_inclusive ? one : SymbolicSize()) - s->lo;
  if (most.non_negative_for_sizes()) return Range{SymbolicSize(), most};
  for (long long k = 2; k <= 8; ++k) {
    const SymbolicSize shift = SymbolicSize::constant(k);
    if ((most + shift - one).non_negative_for_sizes())
      return Range{SymbolicSize(), SymbolicSize::max_of(most + shift, shift) - shift};
  }
  why = "line " + std::to_string(u.line) + ": the loop that steps it runs up to " + most.text() + " times, which gi cannot bound below";
  return std::nullopt;
}

// A linear form's range: each term's range times its coefficient, summed.
std::optional<Range> Analyser::eval_linear(const LinearForm& f, const std::map<std::string, Bound>& guards,
                                           std::string& why, int depth) const {
  Range total = exact(SymbolicSize::constant(f.constant));
  for (const auto& [text, term] : f.terms) {
    const auto r = eval(term.atom, guards, why, depth + 1);
    if (!r) return std::nullopt;
    if (r->real) {
      if (why.empty()) why = "'" + text + "' is a real value in a sum gi adds up term by term";
      return std::nullopt;
    }
    const SymbolicSize c = SymbolicSize::constant(term.coefficient);
    Range scaled{r->lo * c, r->hi ? std::optional<SymbolicSize>(*r->hi * c) : std::nullopt};
    if (term.coefficient < 0) {
      if (!r->hi) {
        if (why.empty()) why = "'" + text + "' has no upper end, and it is subtracted";
        return std::nullopt;
      }
      scaled = Range{*r->hi * c, r->lo * c};
    }
    total = Range{total.lo + scaled.lo,
                  total.hi && scaled.hi ? std::optional<SymbolicSize>(*total.hi + *scaled.hi) : std::nullopt};
  }
  return total;
}

// What the ternary's test `x OP c` (c known) says of x where it holds
// (`yes`) and where it fails (`no`).
void Analyser::refine(const Expr& test, std::map<std::string, Bound>& yes, std::map<std::string, Bound>& no) const {
  const auto cmp = oriented(test, [](const Expr& e) { return e.kind == ExprKind::Name; });
  if (!cmp) return;
  const std::string& op = cmp->op;
  const Expr *x = cmp->subject, *c = cmp->other;
  std::string ignored;
  const auto r = eval(*c, {}, ignored);
  if (!r || !r->hi || !(*r->hi == r->lo) || r->strict) return;
  const SymbolicSize v = r->lo, one = SymbolicSize::constant(1);
  // `inclusive`: the test, or its failing, includes c itself (analysis/parameter_use_reals.cpp).
  const auto upper = [&](std::map<std::string, Bound>& g, SymbolicSize limit, bool inclusive) {
    g[x->text] = Bound{limit, 0, "", "", "", false};
    g[x->text].inclusive = inclusive;
  };
  const auto lower = [&](std::map<std::string, Bound>& g, SymbolicSize least, bool inclusive) {
    g[kLowerBound + x->text] = Bound{least, 0, "", "", "", false};
    g[kLowerBound + x->text].inclusive = inclusive;
  };
  // `x == c`: x is c where it holds, and differs from c where it fails.
  const auto differs = [&](std::map<std::string, Bound>& g) { g[kNotEqual + x->text] = Bound{v, 0, "", "", "", false}; };
  if (op == "==") upper(yes, v + one, true), lower(yes, v, true), differs(no);
  else if (op == "!=") upper(no, v + one, true), lower(no, v, true), differs(yes);
  else if (op == "<") upper(yes, v, false), lower(no, v, true);
  else if (op == "<=") upper(yes, v + one, true), lower(no, v + one, false);
  else if (op == ">") lower(yes, v + one, false), upper(no, v + one, true);
  else if (op == ">=") lower(yes, v, true), upper(no, v, false);
}

// A call of a __device__ helper whose body ends in its only `return EXPR;`:
// EXPR's range, its parameters standing for the call's arguments.
std::optional<Range> Analyser::helper_value(const Expr& call, const std::map<std::string, Bound>& guards,
                                            std::string& why, int depth) const {
  if (depth > 8) return std::nullopt;
  const auto sub = called_helper(call, guards, depth + 1);
  const auto e = sub ? sub->only_return() : std::nullopt;
  if (!e) return std::nullopt;
  std::string inner;
  const auto r = sub->eval(*e, {}, inner, depth + 1);
  if (!r && why.empty()) why = "in " + call.callee() + ": " + inner;
  return r;
}

// The __device__ helper a call names (in the file or a local header), as an
// Analyser whose parameters are the call's arguments, their ranges under
// `guards` (evaluated at `depth`); nullopt where no helper takes that many.
std::optional<Analyser> Analyser::called_helper(const Expr& call, const std::map<std::string, Bound>& guards,
                                                int depth) const {
  const auto found = find_helper(call.callee(), [](const grammar::Function&) { return true; });
  if (!found || found->function->params.size() + 1 != call.children.size()) return std::nullopt;
  std::optional<Analyser> sub(std::in_place, *found->file, *found->function, symbols_, true);
  for (std::size_t i = 0; i < found->function->params.size(); ++i) {
    std::string ignored;
    sub->arguments_[found->function->params[i].name] = eval(call.children[i + 1], guards, ignored, depth);
  }
  return sub;
}

// The value of a function whose body has one `return EXPR;`: EXPR; nullopt
// for none or several returns.
std::optional<Expr> Analyser::only_return() const {
  std::optional<std::size_t> ret;
  for (std::size_t i = 0; i < elements_.size(); ++i)
    if (is_return(i)) {
      if (ret) return std::nullopt;
      ret = i;
    }
  if (!ret) return std::nullopt;
  const grammar::Element& el = k_.elements[elements_[*ret]];
  return parse(next(el.tokens.first), prev(el.tokens.last));
}

std::map<std::string, Bound> Analyser::without(std::map<std::string, Bound> g, const std::string& name) {
  g.erase(name);
  return g;
}

}  // namespace gi::analysis::detail

// The Analyser's lockstep partner (analysis/parameter_use_analyser.hpp): an
// index that a loop steps in lockstep with a local a guard bounds, read
// under that guard. NiftyReg's convolution windows walk a row this way:
//
//   int index = tid - radius;  x -= radius;      // x = tid's column, minus radius
//   for (int i = 0; i < windowSize; i++) {
//     if (-1 < x && x < nx) sum += fetch(index);
//     index++; x++;
//   }
//
// index's own range starts at tid - radius, below 0. But each pass steps
// both by one, so index - x keeps its value before the loop, tid - column,
// and index is that plus x, which the guard keeps in [0, nx - 1]. With a
// step d per pass for the index (`index += nx` down a column, for y's +1)
// the index is its value before the loop minus d times the partner's,
// plus d times the partner.
// The values are summed as polynomials over atoms (names, member reads,
// quotients, calls: SymbolicSize with each atom's text as a name), a local
// assigned more than once replaced by its straight-line value where it is
// read, so that the loop's passes and the terms both values share (radius)
// cancel. Ranges alone would take tid and the column as two independent
// values. What is left as `a - D * (a / D)` is the remainder a % D, in
// [0, D - 1] (as analysis/parameter_use_remainder.cpp reads it written out).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/expression.hpp"
#include "analysis/parameter_use_analyser.hpp"

namespace gi::analysis::detail {

namespace {

using Polynomial = AtomPolynomial;

Polynomial constant_polynomial(long long c) { return Polynomial{SymbolicSize::constant(c), {}}; }

Polynomial combine(const Polynomial& a, const Polynomial& b, char op) {
  Polynomial out{op == '+' ? a.form + b.form : op == '-' ? a.form - b.form : a.form * b.form, a.atoms};
  out.atoms.insert(b.atoms.begin(), b.atoms.end());
  return out;
}

// A path whose updates include one loop's passes (StraightLineUpdate::
// counter, around the read): the path without them, and that step; nullopt
// for no such step, two of them, or a loop that ended before the read.
std::optional<std::pair<StraightLineValue, StraightLineUpdate>> without_loop_step(const StraightLineValue& path) {
  StraightLineValue before = path;
  before.updates.clear();
  std::optional<StraightLineUpdate> step;
  for (const StraightLineUpdate& u : path.updates) {
    if (!u.counter) before.updates.push_back(u);
    else if (step || u.after_loop) return std::nullopt;
    else step = u;
  }
  if (!step) return std::nullopt;
  return std::make_pair(before, *step);
}

// One term, coefficient 1: the product of `names`.
SymbolicSize monomial(const std::vector<std::string>& names) {
  SymbolicSize m = SymbolicSize::constant(1);
  for (const std::string& n : names) m = m * SymbolicSize::name(n);
  return m;
}

}  // namespace

// e as a polynomial over atoms; nullopt where a local it reads has no value
// straight-line code decides (a name the loop around it assigns).
std::optional<AtomPolynomial> Analyser::polynomial(const Expr& e, int depth) const {
  if (depth > 12) return std::nullopt;
  const Expr& x = without_outer_casts(e);
  if (x.kind == ExprKind::Literal) {
    if (const auto v = whole_literal(x)) return constant_polynomial(*v);
    return std::nullopt;
  }
  if (x.kind == ExprKind::Binary && x.children.size() == 2 && (x.text == "+" || x.text == "-" || x.text == "*")) {
    const auto a = polynomial(x.children[0], depth + 1);
    const auto b = a ? polynomial(x.children[1], depth + 1) : std::nullopt;
    if (!b) return std::nullopt;
    return combine(*a, *b, x.text[0]);
  }
  if (x.kind == ExprKind::Unary && x.children.size() == 1 && (x.text == "-" || x.text == "+")) {
    const auto a = polynomial(x.children[0], depth + 1);
    if (!a || x.text == "+") return a;
    return combine(constant_polynomial(0), *a, '-');
  }
  if (x.kind == ExprKind::Name) {
    if (const auto m = symbols_.integer_macros.find(x.text); m != symbols_.integer_macros.end())
      return constant_polynomial(m->second.value);
    // A local assigned more than once: its value where this reads it.
    if (reassigned(x.text)) {
      std::string ignored;
      const auto path = straight_line_value(k_, fn_, x.text, x.first, ignored);
      if (!path) return std::nullopt;
      return path_polynomial(*path, depth + 1);
    }
  }
  // An atom. One that reads a local assigned more than once means the value
  // it holds here: keyed by where it stands, so that it cancels nothing else.
  if (x.kind == ExprKind::Member && !x.children.empty() && x.children[0].kind == ExprKind::Name &&
      components_assigned_.count(x.children[0].text))
    return std::nullopt;
  std::string key = "@" + canonical_text(x);
  for (const std::string& n : names_in(x))
    if (reassigned(n)) key += "#" + std::to_string(x.first);
  return Polynomial{SymbolicSize::name(key), {{key, x}}};
}

// A local assigned somewhere other than (or besides) its declaration.
bool Analyser::reassigned(const std::string& name) const {
  const auto a = assigned_count_.find(name);
  return !assigned_once_.count(name) && a != assigned_count_.end() && a->second > 0;
}

// A straight-line value (no loop's passes, no condition) as a polynomial:
// its definition, then each update in order.
std::optional<AtomPolynomial> Analyser::path_polynomial(const StraightLineValue& path, int depth) const {
  if (path.conditional()) return std::nullopt;
  const auto definition = parse(path.first, path.last);
  auto value = definition ? polynomial(*definition, depth + 1) : std::nullopt;
  for (const StraightLineUpdate& u : path.updates) {
    if (!value || u.counter) return std::nullopt;
    std::optional<Polynomial> operand = constant_polynomial(u.amount);
    if (u.first <= u.last) {
      const auto e = parse(u.first, u.last);
      operand = e ? polynomial(*e, depth + 1) : std::nullopt;
      if (!operand) return std::nullopt;
    }
    value = combine(*value, *operand, u.op);
  }
  return value;
}

// The polynomial's range: each term's atoms' ranges multiplied, times its
// coefficient, summed; after taking out each `a - D * (a / D)` as [0, D - 1].
std::optional<Range> Analyser::polynomial_range(const Polynomial& p, const std::map<std::string, Bound>& guards,
                                                int depth) const {
  if (depth > 12) return std::nullopt;
  std::string ignored;
  // A remainder: a term -k * D * q with q an atom a / D (or a local
  // assigned once with that value) stands beside k * a.
  for (const auto& [names, c] : p.form.terms()) {
    if (c >= 0 || names.empty()) continue;
    for (const std::string& q : names) {
      const Expr& atom = p.atoms.at(q);
      std::optional<Expr> value = atom;
      if (atom.kind == ExprKind::Name && assigned_once_.count(atom.text)) value = definition(atom.text);
      if (!value) continue;
      const Expr& quotient = without_outer_casts(*value);
      if (quotient.kind != ExprKind::Binary || quotient.text != "/" || quotient.children.size() != 2) continue;
      const auto divisor = polynomial(quotient.children[1], depth + 1);
      const auto dividend = polynomial(quotient.children[0], depth + 1);
      if (!divisor || !dividend || divisor->form.terms().size() != 1) continue;
      const auto& [d_names, d_coefficient] = *divisor->form.terms().begin();
      std::vector<std::string> expected = d_names;
      expected.push_back(q);
      std::sort(expected.begin(), expected.end());
      if (d_coefficient != 1 || expected != names) continue;
      // a >= 0 and D one known size: a % D is in [0, D - 1].
      const auto a = eval(quotient.children[0], guards, ignored, depth + 1);
      const auto d = eval(quotient.children[1], guards, ignored, depth + 1);
      if (!a || a->real || !a->lo.non_negative_for_sizes() || !d || d->real || !d->hi || !(*d->hi == d->lo) ||
          d->lo == SymbolicSize())
        continue;
      Polynomial rest = p;
      const SymbolicSize k = SymbolicSize::constant(-c);
      rest.form = p.form + k * monomial(names) - k * dividend->form;
      rest.atoms.insert(dividend->atoms.begin(), dividend->atoms.end());
      const auto left = polynomial_range(rest, guards, depth + 1);
      if (!left || !left->hi) return std::nullopt;
      return Range{left->lo, *left->hi + k * (d->lo - SymbolicSize::constant(1))};
    }
  }
  Range total = exact(SymbolicSize());
  for (const auto& [names, c] : p.form.terms()) {
    Range term = exact(SymbolicSize::constant(1));
    for (const std::string& n : names) {
      const auto r = eval(p.atoms.at(n), guards, ignored, depth + 1);
      bool known = true;
      const auto product = r && !r->real ? arithmetic("*", term, *r, ignored, known) : std::nullopt;
      if (!product || !product->hi) return std::nullopt;
      term = *product;
    }
    const SymbolicSize k = SymbolicSize::constant(c);
    term = c > 0 ? Range{term.lo * k, *term.hi * k} : Range{*term.hi * k, term.lo * k};
    total = Range{total.lo + term.lo, *total.hi + *term.hi};
  }
  return total;
}

// The index `path` describes, read at token `at`, through a partner: a
// local with both ends bounded by the guards here that the same loop steps
// by one per pass while it steps the index by d. index = (its value before
// the passes) - d * (the partner's) + d * partner.
std::optional<Range> Analyser::partner_value(const StraightLineValue& path, std::size_t at,
                                             const std::map<std::string, Bound>& guards, int depth) const {
  const auto split = path.conditional() ? std::nullopt : without_loop_step(path);
  if (!split || split->second.op == '*') return std::nullopt;
  const StraightLineUpdate& step = split->second;
  std::optional<Polynomial> d = constant_polynomial(step.amount);
  if (step.first <= step.last) {
    const auto e = parse(step.first, step.last);
    d = e ? polynomial(*e, depth + 1) : std::nullopt;
  }
  const auto index_before = d ? path_polynomial(split->first, depth + 1) : std::nullopt;
  if (!index_before) return std::nullopt;
  if (step.op == '-') d = combine(constant_polynomial(0), *d, '-');
  const auto start = parse(step.start_first, step.start_last);
  for (const auto& [name, bound] : guards) {
    if (name.empty() || name[0] == '#' || name == path.name || !guards.count(kLowerBound + name)) continue;
    std::string ignored;
    const auto partner = straight_line_value(k_, fn_, name, at, ignored);
    const auto partner_split = partner && !partner->conditional() ? without_loop_step(*partner) : std::nullopt;
    if (!partner_split) continue;
    // The same loop steps the partner by one per pass.
    const StraightLineUpdate& partner_step = partner_split->second;
    if (partner_step.counter != step.counter || partner_step.op != '+' || partner_step.first <= partner_step.last ||
        partner_step.amount != 1)
      continue;
    const auto partner_start = parse(partner_step.start_first, partner_step.start_last);
    if (!start || !partner_start || canonical_text(*start) != canonical_text(*partner_start)) continue;
    const auto partner_polynomial = path_polynomial(partner_split->first, depth + 1);
    if (!partner_polynomial) continue;
    Expr partner_name;
    partner_name.kind = ExprKind::Name;
    partner_name.text = name;
    partner_name.first = partner_name.last = at;
    const Polynomial guarded{SymbolicSize::name("@" + name), {{"@" + name, partner_name}}};
    const Polynomial value =
        combine(combine(*index_before, combine(*d, *partner_polynomial, '*'), '-'), combine(*d, guarded, '*'), '+');
    const auto r = polynomial_range(value, guards, depth + 1);
    if (r && !r->real && r->hi && r->lo.non_negative_for_sizes()) return r;
  }
  return std::nullopt;
}

}  // namespace gi::analysis::detail

// The Analyser's remainder idiom (analysis/parameter_use_analyser.hpp):
// `a - b * (a / b)` is a % b, in [0, b - 1] for a >= 0 and b a size. Kernels
// write it to split a flat index into coordinates without `%`:
//   NiftyReg's getJacobianMatrix3D: `z = t / (nx * ny); t -= z * nx * ny;
//   y = t / nx; x = t - y * nx;`
//   NiftyReg's smoothJointHistogramY: `tid / A - R * (int)(tid / (A * R))`,
//   which is (tid / A) % R.
// Ranges alone give `a - b * q` a negative lower end; the idiom is matched
// by its shape: the quotient (written inline, or a local assigned once with
// it as its value) divides the same dividend by the minuend's divisors
// times the factors it is multiplied by.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/expression.hpp"
#include "analysis/parameter_use_analyser.hpp"

namespace gi::analysis::detail {

namespace {

// The factors of a product, casts stripped: `z * nx * ny` -> z, nx, ny.
void factors_of(const Expr& e, std::vector<const Expr*>& out) {
  const Expr& x = without_outer_casts(e);
  if (x.kind == ExprKind::Binary && x.text == "*" && x.children.size() == 2) {
    factors_of(x.children[0], out);
    factors_of(x.children[1], out);
    return;
  }
  out.push_back(&x);
}

std::vector<std::string> canonical_factors(const Expr& e) {
  std::vector<const Expr*> fs;
  factors_of(e, fs);
  std::vector<std::string> out;
  for (const Expr* f : fs) out.push_back(canonical_text(*f));
  return out;
}

// `X / D` (casts stripped): X and D's factors; nullopt for no division.
struct Quotient {
  const Expr* dividend = nullptr;
  std::vector<std::string> divisors;
};

std::optional<Quotient> quotient_of(const Expr& e) {
  const Expr& x = without_outer_casts(e);
  if (x.kind != ExprKind::Binary || x.text != "/" || x.children.size() != 2) return std::nullopt;
  return Quotient{&without_outer_casts(x.children[0]), canonical_factors(x.children[1])};
}

}  // namespace

// `minuend - subtrahend`, read at token `at`, as a remainder: [0, b - 1].
// nullopt where the shape is not the idiom, or a part has no range that
// makes it one (a dividend that may be negative, b not one size). The
// minuend's range is `dividend_range` where the caller has it (an update
// `t -= z * nx * ny`: t's value before it).
std::optional<Range> Analyser::remainder_value(const Expr& minuend, const Expr& subtrahend, std::size_t at,
                                               const std::map<std::string, Bound>& guards, int depth,
                                               const std::optional<Range>& dividend_range) const {
  if (depth > 12) return std::nullopt;
  // The minuend: X1, or X1 / D1.
  const Expr& m = without_outer_casts(minuend);
  const auto m_quotient = quotient_of(m);
  const Expr& x1 = m_quotient ? *m_quotient->dividend : m;
  std::vector<std::string> expected = m_quotient ? m_quotient->divisors : std::vector<std::string>{};
  // The subtrahend: b's factors and one quotient X / D, inline or a local's value.
  std::vector<const Expr*> fs;
  factors_of(subtrahend, fs);
  std::optional<Quotient> q;
  std::optional<Expr> q_definition;  // kept alive for q's pointers
  std::size_t q_at = at;             // where the quotient reads its dividend
  std::vector<const Expr*> b;
  for (const Expr* f : fs) {
    std::optional<Quotient> here = quotient_of(*f);
    if (!here && f->kind == ExprKind::Name && assigned_once_.count(f->text) && !q) {
      if ((q_definition = definition(f->text)) && (here = quotient_of(*q_definition)))
        q_at = definitions_.at(f->text).first;
    }
    if (here && !q) q = here;
    else if (here) return std::nullopt;  // two quotients: not the idiom
    else b.push_back(f);
  }
  if (!q || b.empty() || canonical_text(*q->dividend) != canonical_text(x1)) return std::nullopt;
  for (const Expr* f : b) expected.push_back(canonical_text(*f));
  std::vector<std::string> divisors = q->divisors;
  std::sort(expected.begin(), expected.end());
  std::sort(divisors.begin(), divisors.end());
  if (expected != divisors) return std::nullopt;
  // The dividend is one value at both reads: no assignment to a name it
  // reads stands between the quotient's reading and this one.
  for (const std::string& n : names_in(x1)) {
    const auto assigned = assigned_count_.find(n);
    if (assigned == assigned_count_.end() || assigned->second <= 1) continue;
    for (std::size_t t = std::min(q_at, at); t < std::max(q_at, at); ++t)
      if (tok(t).is(n) && (kAssignments.count(tok(next(t)).text) || tok(next(t)).is("++") || tok(next(t)).is("--") ||
                           tok(prev(t)).is("++") || tok(prev(t)).is("--")))
        return std::nullopt;
  }
  std::string ignored;
  const auto dividend = dividend_range ? dividend_range : eval(x1, guards, ignored, depth + 1);
  if (!dividend || dividend->real || !dividend->lo.non_negative_for_sizes()) return std::nullopt;
  Range divisor = exact(SymbolicSize::constant(1));
  for (const Expr* f : b) {
    const auto r = eval(*f, guards, ignored, depth + 1);
    bool known = true;
    if (!r || r->real || !r->hi || !(*r->hi == r->lo) || !r->lo.non_negative_for_sizes() || r->lo == SymbolicSize())
      return std::nullopt;
    const auto product = arithmetic("*", divisor, *r, ignored, known);
    if (!product) return std::nullopt;
    divisor = *product;
  }
  return Range{SymbolicSize(), divisor.lo - SymbolicSize::constant(1)};
}

}  // namespace gi::analysis::detail

#pragma once
// Sums whose terms share a factor the loop does not change: the sites of the
// `factor` family (grammar/edits/factor.cpp). A B-spline kernel sums a
// tensor product of per-axis weights times control points,
//     for (c) for (b) for (a) { w = xBasis[a] * yBasis[b] * zBasis[c]; s += w * P.x; }
// and multiplies every term by yBasis[b] * zBasis[c], which the innermost
// loop never changes. By distributivity the loop can sum xBasis[a] * P.x
// alone and multiply the sum by the other factors once after it: fewer
// multiplications per pass, and sums that share what is left (the same
// `xBasis[a] * P.x` in two of a Jacobian's nine entries) share one partial
// sum. The factors move across the sum, so a float result is reassociated;
// the seed's tolerance judges it as for any variant.
//
// A site is a `for` loop with a braced body of straight-line statements
// (statements, declarations, break and continue: no if, no nested loop, no
// return or goto) holding at least one accumulation
//     ACC += F1 * F2 * ... / D1 ...;   (or -=)
// of float or double type where
//  - ACC is a local scalar or an element of a local array (not a pointer,
//    not __shared__) at an index the body does not change, and the body
//    names ACC nowhere else (so nothing reads a partial value);
//  - the factors split into some the loop changes and at least one it does
//    not (invariant): an invariant factor names nothing the body assigns
//    (its assignments, declarations, ++/--, the loop counter, anything
//    passed to a call that is no pure math function), calls nothing, and
//    reads memory only from a local array of the function;
//  - a factor that is a local W set once in the body by `W = G1 * G2 ...;`
//    before the accumulation, where nothing the body assigns between the
//    two changes a name of the G's, counts as the G's (weights computed on
//    a line of their own, as the library's kernels write them).
// The rewrite: one partial sum per distinct product of the changing
// factors, declared before the loop at zero; each accumulation becomes the
// partial's update (a second accumulation with the same product shares
// it), and after the loop ACC += partial * invariant factors. A loop that
// runs no pass then adds partial * factors = 0, as the seed adds nothing
// (unless a factor is infinite or NaN, where 0 * inf is NaN).
// Loops with a float accumulation that are no site are refused with the
// line and the reason, except those with nothing to move out (every
// reduction loop): they and loops with no float sum are neither.
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct FactoredSum {
  std::size_t statement = 0;     // the accumulation's element
  std::string accumulator;       // ACC as written ("jacobian[0]")
  std::string op;                // "+=" or "-="
  std::string type;              // ACC's declared type: float or double
  std::string varying;           // the product of the factors the loop changes ("xDerivative[a] * controlPoint.x")
  std::string invariant;         // the others, each with its operator: " * yBasis[b] * zBasis[c]", " * basis[b] / spacingX"
  std::size_t partial = 0;       // index into FactorSite::partials
};

struct FactorPartial {
  std::string type, varying;
};

struct FactorSite {
  int function = -1;
  std::size_t loop = 0;        // the for header's element
  std::size_t body_close = 0;  // the element of its body's closing brace
  std::vector<FactoredSum> sums;
  std::vector<FactorPartial> partials;
  // What the rewrite relies on, for the line edits of the same patch: the
  // accumulations and the weight definitions it reads through (a line edit
  // may not delete or replace them), and every name a line copied into the
  // loop may not name (the accumulators, the weights, the names of the
  // moved factors and of the weights' definitions).
  std::set<std::size_t> protected_elements;
  std::set<std::string> guarded_names;
  // Weight definitions nothing reads once the sums are rewritten (the
  // function names the weight nowhere else): the rewrite drops them.
  std::set<std::size_t> dead_definitions;
};

struct FactorSites {
  std::vector<FactorSite> sites;
  std::vector<std::string> refusals;  // "line N: why", one per loop with a float accumulation that is no site
  // Loops whose sums are all fine but have no factor the loop leaves
  // unchanged (every reduction loop): not listed as refusals, which would
  // be noise in `gi families`; an edit that names one gets the reason.
  std::vector<std::string> nothing_to_move;
};

// `live`: whether a token is compiled (switch paths the seed's default
// setting leaves out are not looked at); empty: every token.
FactorSites find_factor_sites(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live = {});

}  // namespace gi::analysis

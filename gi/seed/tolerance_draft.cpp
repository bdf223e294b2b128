#include "gi/seed/tolerance_draft.hpp"

#include "analysis/warp_per_item_sites.hpp"

namespace gi {

using json = nlohmann::ordered_json;

// The variant adds the lanes' partial sums in another order than the seed's one thread.
std::string float_loop_sum(const grammar::ParsedKernel& k, const std::string& kernel) {
  std::string loop_sum_where;
  for (const analysis::WarpPerItemSite& site : analysis::find_warp_per_item_sites(k).sites) {
    if (site.function < 0 || k.functions[static_cast<std::size_t>(site.function)].name != kernel) continue;
    for (const analysis::LoopSum& sum : site.sums)
      if (loop_sum_where.empty() && (sum.type == "float" || sum.type == "double"))
        loop_sum_where = "line " + std::to_string(k.tokens[k.elements[site.loop].tokens.first].line) +
                         ": the loop sums " + sum.type + " " + sum.name;
  }
  return loop_sum_where;
}

ToleranceDraft draft_tolerance(const FloatOutputs& outputs) {
  ToleranceDraft d;
  json& tolerance = d.tolerance;
  std::string& note = d.note;
  const std::string& sum_where = outputs.atomic_sum_where;
  const std::string& loop_sum_where = outputs.loop_sum_where;
  if (outputs.atomic_sum) {
    tolerance = {{"abs", 0.05}, {"rel", 0.02}};
    note = "gi init: '" + sum_where + "' adds floats into a running sum in whatever order the atomics arrive, and "
           "the seed is its own reference: a variant that adds partial sums first (the transformation families do) "
           "is more accurate, and differs from the seed by the seed's own rounding bias, which grows with the "
           "number of terms (measured on an H100 for tests/data/user/dot_product: 0.19% at 4 M terms of one sign). "
           "2% relative leaves a margin of about 10x; it still catches a dropped block of a large share of the values. "
           "Tighten it where the sums are short.";
    d.inferred = "tolerance: abs 0.05, rel 0.02 (a float atomic sum, " + sum_where + ")";
  } else if (outputs.plain && !loop_sum_where.empty()) {
    tolerance = {{"abs", 1e-3}, {"rel", 1e-4}};
    note = "gi init: '" + loop_sum_where + "', and warp_per_item may share that loop among lanes, which add their "
           "partial sums in another order than the seed's one thread: the result then differs by a few ulps of the "
           "partial sums, which can be large beside a total that cancels (measured on an H100 for NiftyReg's "
           "reg_marginaliseTargetXY_kernel: 6.9e-5 on a total of 5.1, summing 64 values of normal(0, 100)). 1e-3 "
           "absolute holds that for partial sums up to about a thousand, 1e-4 relative the larger totals; a dropped "
           "or repeated term of size 1e-3 or more still fails. Tighten it where the sums are short and small.";
    d.inferred = "tolerance: abs 0.001, rel 0.0001 (a float sum in a loop, " + loop_sum_where + ")";
  } else if (outputs.plain) {
    tolerance = {{"abs", 1e-5}, {"rel", 1e-5}};
    note = "gi init's default: float outputs may differ from the seed's by 1e-5 absolute plus 1e-5 relative (an edit "
           "may reorder float operations); the seed's own run-to-run spread is added to the absolute part on every "
           "workload";
  } else {
    tolerance = {{"abs", 0}, {"rel", 0}};
    note = outputs.extremum ? "gi init: the float outputs are maxima or minima by atomics, exact in any order"
                            : "gi init: the outputs are integers, exact in any order";
    d.inferred = std::string("tolerance: exact (") + (outputs.extremum ? "float extrema" : "integer outputs") + ")";
  }
  return d;
}

}  // namespace gi

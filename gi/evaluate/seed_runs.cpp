#include "gi/evaluate/seed_runs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fitness/check/output_check.hpp"

namespace gi {

namespace {

std::vector<double> values_of(const fitness::BufferArg& b, const std::vector<std::byte>& bytes) {
  const std::size_t eb = fitness::element_bytes(b.type), components = fitness::element_components(b.type);
  std::vector<double> v;
  v.reserve(b.count * components);
  for (std::size_t e = 0; e < b.count; ++e)
    for (std::size_t c = 0; c < components; ++c) v.push_back(fitness::component_value(b.type, bytes.data() + e * eb, c));
  return v;
}

// Largest |difference| between two runs' values of one buffer: integer
// outputs must repeat exactly, float ones stay finite.
double difference(const fitness::BufferArg& b, const std::vector<std::byte>& x, const std::vector<std::byte>& y) {
  const double d = fitness::max_difference(b, x, y);
  if (std::isfinite(d)) return d;
  throw std::runtime_error(
      "the seed, run as its own reference, wrote " +
      std::string(fitness::element_is_float(b.type) ? "a non-finite value in one run and another value in the other"
                                                    : "different integers") +
      " to '" + b.name + "' in two runs on the same data: a reference must repeat");
}

// A float output of infinities with no finite value among them: a reference
// any variant writing infinities would match (fitness/check/output_check.cpp
// lets the same infinity pass), so no reference. (NaN alone, the fill of
// elements the seed leaves unwritten included, matches nothing anyway.)
void refuse_infinities_only(const fitness::BufferArg& b, const std::vector<double>& values) {
  if (!fitness::element_is_float(b.type)) return;
  if (std::none_of(values.begin(), values.end(), [](double v) { return std::isinf(v); })) return;
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); })) return;
  throw std::runtime_error("the seed, run as its own reference, left no finite value in '" + b.name + "' (" +
                           std::to_string(values.size()) +
                           " values, each inf or NaN): its arithmetic gives no number on these inputs; give its "
                           "inputs a range where it is defined (gi init --like NAME:uniform(LO,HI), or your own "
                           "data, NAME:values(@FILE))");
}

}  // namespace

fitness::MeasuredReference measure_seed_runs(const fitness::LaunchPlan& plan, int runs,
                                             const std::function<SeedRun()>& run) {
  std::vector<const fitness::BufferArg*> outputs;
  for (const fitness::BufferArg& b : plan.buffers)
    if (b.role == fitness::ParamRole::Out || b.role == fitness::ParamRole::InOut) outputs.push_back(&b);
  fitness::MeasuredReference m;
  std::vector<std::vector<std::byte>> first;
  for (int r = 0; r < runs; ++r) {
    SeedRun got = run();
    if (!got.report.ok())
      throw std::runtime_error("the seed, run as its own reference (run " + std::to_string(r + 1) + " of " +
                               std::to_string(runs) + "): " + fitness::to_string(got.report.status) + ": " +
                               got.report.message);
    if (got.outputs.size() != outputs.size())
      throw std::logic_error("a run of the seed returned " + std::to_string(got.outputs.size()) + " outputs for " +
                             std::to_string(outputs.size()) + " output buffers");
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (r == 0) {
        m.outputs[outputs[k]->name] = values_of(*outputs[k], got.outputs[k]);
        refuse_infinities_only(*outputs[k], m.outputs[outputs[k]->name]);
      } else {
        m.spread_abs = std::max(m.spread_abs, difference(*outputs[k], first[k], got.outputs[k]));
      }
    }
    if (r == 0) first = std::move(got.outputs);
  }
  return m;
}

}  // namespace gi

#pragma once
// Shared by the tests that emulate seed kernels in float (reference_test and
// seeds_*_test): the GPU's optional multiply-add contraction, and the output
// checker's rule applied to an emulated output, with error statistics.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::test {

// `Fma` models the GPU compiler contracting a multiply-add into one fused
// operation (it does by default), which rounds differently.
template <bool Fma>
float multiply_add(float a, float b, float c) {
  if constexpr (Fma) return std::fma(a, b, c);
  else return a * b + c;
}

struct ErrorStats {
  double max_abs = 0, max_rel = 0;
  double worst_fraction = 0;  // largest error / allowed error: 1 / the safety margin
  double largest_reference = 0;
  std::size_t values = 0, failures = 0;
  std::string first_failure;
};

// The checker's rule: |got - ref| <= abs + rel * |ref|, NaN fails; only the
// written elements when the output names them. A zero allowance makes any
// error count as infinitely over it.
inline ErrorStats compare(const std::vector<float>& got, const fitness::ExpectedOutput& expected,
                          std::size_t components, const fitness::Tolerance& tol) {
  ErrorStats s;
  auto check = [&](std::size_t e) {
    for (const int c : expected.checked_components) {
      const std::size_t i = e * components + static_cast<std::size_t>(c);
      const double ref = expected.values[i], err = std::fabs(got.at(i) - ref);
      ++s.values;
      s.max_abs = std::max(s.max_abs, err);
      s.largest_reference = std::max(s.largest_reference, std::fabs(ref));
      if (ref != 0) s.max_rel = std::max(s.max_rel, err / std::fabs(ref));
      const double allowed = tol.abs + tol.rel * std::fabs(ref);
      s.worst_fraction = std::max(s.worst_fraction, allowed > 0 ? err / allowed : (err > 0 ? 1e300 : 0.0));
      if (!(err <= allowed) && s.failures++ == 0)
        s.first_failure = expected.buffer + "[" + std::to_string(e) + "]." + std::to_string(c) + ": got " +
                          std::to_string(got[i]) + ", expected " + std::to_string(ref);
    }
  };
  if (expected.written_elements) {
    for (const std::uint32_t e : *expected.written_elements) check(e);
  } else {
    for (std::size_t e = 0; e < expected.values.size() / components; ++e) check(e);
  }
  return s;
}

// Values per element of a buffer (4 for float4).
inline std::size_t components_of(const fitness::KernelSpec& spec, const std::string& buffer) {
  return fitness::element_components(spec.find_parameter(buffer)->type);
}

}  // namespace gi::test

// gi init sizes the five held-out workloads so that validation's rule holds:
// 16 M input values or 16 M output values over the five together
// (gi/publish/validation.hpp). Each workload counts the side that is the
// larger on the timed one; a sum of each workload's larger side mixed the
// sides and fell short (NiftyReg's 2-D resampling: 9 M outputs, 15 M inputs).
#include <gtest/gtest.h>

#include "fitness/workload/expression.hpp"
#include "gi/publish/validation.hpp"
#include "gi/seed/spec_scaffold.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

// Written for this test: four outputs per thread from an image of another
// size, so the larger side changes as the held-out shapes vary the two.
constexpr const char* kGather = R"(
__global__ void gather(const float* img, float* out, int n, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = img[i % m];
    for (int c = 0; c < 4; c++) out[4 * i + c] = c * v;
  }
}
)";

TEST(HeldOutValues, OneSideReachesWhatValidationAsks) {
  for (const char* m : {"m=300000", "m=3000000"}) {
    const SpecScaffold s =
        scaffold_spec(kGather, "k.cu", std::nullopt, "user", parse_init_sizes({"n=100000", m}, {}));
    const json spec = json::parse(s.spec.dump());
    double inputs = 0, outputs = 0;
    for (const json& w : spec["workloads"]["validate"]) {
      fitness::Variables v;
      for (const auto& [name, value] : w["variables"].items())
        if (value.is_number()) v[name] = value.get<double>();
      for (const json& p : spec["parameters"]) {
        if (!p.contains("count")) continue;
        const double c = fitness::Expression::parse(p["count"].get<std::string>()).evaluate(v);
        (p["role"] == "in" ? inputs : outputs) += c;
      }
    }
    EXPECT_GE(std::max(inputs, outputs), static_cast<double>(kMinValidationValues))
        << m << ": " << inputs << " inputs, " << outputs << " outputs";
  }
}

}  // namespace
}  // namespace gi

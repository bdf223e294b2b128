// Scalars that pick a mode (gi/seed/mode_scalars.hpp): an integer parameter
// the kernel compares for equality with numbers gets a small check at each
// value the timed workload does not take (and one past the largest, for the
// `else`), and the held-out workloads go through them all; a size, a bool
// or a parameter the kernel assigns is no mode.
#include <gtest/gtest.h>

#include "gi/seed/mode_scalars.hpp"
#include "gi/seed/spec_scaffold.hpp"

namespace gi {
namespace {

using json = nlohmann::json;

// Written for this test: interpolation picked by `order`, as NiftyReg's
// resampling picks it by kernelType.
constexpr const char* kResample = R"(
__global__ void resample(const float* in, float* out, int n, int order, float shift) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float x = i + shift;
    const int j = min(max((int)x, 0), n - 2);
    if (order == 0) out[i] = in[j];
    else if (order == 1) out[i] = in[j] + (x - j) * (in[j + 1] - in[j]);
    else out[i] = 0.5f * (in[j] + in[j + 1]);
  }
}
)";

TEST(ModeScalars, TheValuesAKernelComparesAParameterWith) {
  const grammar::ParsedKernel k = grammar::parse_kernel(
      "__global__ void k(float* o, int mode, int n, int step, int rows, int cols) {\n"
      "  if (mode == 2 || 7 == mode) o[0] = 1.f;\n"
      "  switch (n) { case 3: o[1] = 2.f; break; case -1: break; }\n"
      "  step += 1;\n"
      "  if (step != 4) o[2] = 3.f;\n"
      "  if ((step + 1) % rows == 0 && cols == 2 && cols * 2 < 9) o[3] = 4.f;\n"
      "}\n",
      "k.cu");
  const auto modes = mode_values(k, k.functions[0], {"mode", "n", "step", "rows", "cols"});
  ASSERT_EQ(modes.size(), 2u);
  EXPECT_EQ(modes.at("mode"), (std::set<long long>{2, 7}));
  EXPECT_EQ(modes.at("n"), (std::set<long long>{-1, 3}));
  EXPECT_FALSE(modes.count("step"));  // assigned in the body
  EXPECT_FALSE(modes.count("rows"));  // the remainder is compared, not rows
  EXPECT_FALSE(modes.count("cols"));  // also computed with: a quantity
}

TEST(ModeScalars, EachOtherModeGetsASmallCheckAndTheHeldOutGoThroughThem) {
  const SpecScaffold s = scaffold_spec(kResample, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"n=100000", "order=1", "shift=0.25"}, {}));
  const json spec = json::parse(s.spec.dump());
  const json& checks = spec["workloads"]["train_checks"];
  ASSERT_EQ(checks.size(), 3u) << checks.dump(2);  // the small check, then order 0 and 2
  EXPECT_EQ(checks[0]["variables"]["order"], 1);
  EXPECT_EQ(checks[1]["variables"]["order"], 0);
  EXPECT_EQ(checks[2]["variables"]["order"], 2);
  EXPECT_EQ(checks[1]["variables"]["n"], checks[0]["variables"]["n"]);
  std::set<int> held_out;
  for (const json& v : spec["workloads"]["validate"]) held_out.insert(v["variables"]["order"].get<int>());
  EXPECT_EQ(held_out, (std::set<int>{0, 1, 2}));
  // n sizes the buffers: no mode, though nothing compares it with a number here anyway.
  EXPECT_EQ(spec["workloads"]["train"]["variables"]["order"], 1);
}

// An unsigned scalar compared with -1 (its largest value) takes no negative value.
TEST(ModeScalars, AnUnsignedModeTakesNoNegativeValue) {
  std::string source = kResample;
  source.replace(source.find("int order"), 9, "unsigned order");
  source.replace(source.find("if (order == 0)"), 15, "if (order != -1 && order == 0)");
  const SpecScaffold s = scaffold_spec(source, "k.cu", std::nullopt, "user",
                                       parse_init_sizes({"n=100000", "order=1", "shift=0.25"}, {}));
  const json spec = json::parse(s.spec.dump());
  for (const json& c : spec["workloads"]["train_checks"]) EXPECT_GE(c["variables"]["order"].get<int>(), 0) << c.dump();
  for (const json& v : spec["workloads"]["validate"]) EXPECT_GE(v["variables"]["order"].get<int>(), 0) << v.dump();
  EXPECT_EQ(spec["workloads"]["train_checks"].size(), 3u);
}

}  // namespace
}  // namespace gi

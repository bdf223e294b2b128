// An infinity in the reference (Rodinia's myocyte divides by an error of 0
// and keeps the inf in a buffer) is matched only by the same infinity; any
// other value, a finite one within a relative tolerance too, fails; NaN
// never matches. A seed whose float output is infinities with no finite
// value is no reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fitness/check/output_check.hpp"
#include "gi/evaluate/seed_runs.hpp"
#include "plan_helpers.hpp"

namespace gi {
namespace {

using fitness::BufferArg;
using fitness::CheckReport;
using fitness::ElementType;
using fitness::ExpectedOutput;
using fitness::OutputChecker;
using fitness::ParamRole;
using fitness::RunStatus;
using fitness::Tolerance;
using test::bytes_of;

constexpr double kInf = std::numeric_limits<double>::infinity();

CheckReport checked(const std::vector<float>& got, const std::vector<double>& reference) {
  const BufferArg out{"scale", ParamRole::Out, ElementType::F32, got.size(), {}};
  OutputChecker c(Tolerance{1e-5, 1e-4});
  c.check(out, bytes_of(got), ExpectedOutput{"scale", reference, std::nullopt, {}});
  return c.report();
}

TEST(InfiniteReference, TheSameInfinityPassesAndAddsNoError) {
  const float inf = std::numeric_limits<float>::infinity();
  const CheckReport r = checked({inf, -inf, 2}, {kInf, -kInf, 2});
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.values_checked, 3u);
  EXPECT_EQ(r.max_abs_error, 0);
}

TEST(InfiniteReference, AnyOtherValueAgainstAnInfinityFails) {
  const float inf = std::numeric_limits<float>::infinity();
  // The other sign.
  EXPECT_EQ(checked({-inf}, {kInf}).status, RunStatus::WrongOutput);
  // A finite value: |1e30 - inf| <= 1e-4 * inf would hold, and must not pass.
  const CheckReport finite = checked({1e30f}, {kInf});
  EXPECT_EQ(finite.status, RunStatus::WrongOutput);
  EXPECT_NE(finite.message.find("the reference is infinite, which only the same infinity matches"), std::string::npos)
      << finite.message;
  // NaN, computed or the fill, matches no reference, NaN included.
  EXPECT_EQ(checked({std::nanf("")}, {kInf}).status, RunStatus::WrongOutput);
  EXPECT_EQ(checked({std::nanf("")}, {std::nan("")}).status, RunStatus::WrongOutput);
}

fitness::LaunchPlan one_output(std::size_t count) {
  fitness::LaunchPlan p;
  p.buffers.push_back({"scale", ParamRole::Out, ElementType::F32, count, {}});
  return p;
}

SeedRun run_of(const std::vector<float>& values) { return SeedRun{CheckReport{}, {bytes_of(values)}}; }

TEST(InfiniteReference, ASeedOutputOfOnlyInfinitiesIsNoReference) {
  const float inf = std::numeric_limits<float>::infinity();
  try {
    measure_seed_runs(one_output(3), 2, [&] { return run_of({inf, -inf, std::nanf("")}); });
    FAIL() << "a reference of infinities only";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("left no finite value in 'scale' (3 values, each inf or NaN)"),
              std::string::npos)
        << e.what();
  }
  // One finite value among them: a reference, infinities and all.
  const fitness::MeasuredReference m = measure_seed_runs(one_output(3), 2, [&] { return run_of({inf, 1, inf}); });
  EXPECT_EQ(m.outputs.at("scale"), (std::vector<double>{kInf, 1, kInf}));
  // NaN only (a seed that wrote nothing leaves the fill): the check says why
  // on each value, as before.
  EXPECT_NO_THROW(measure_seed_runs(one_output(2), 2, [&] { return run_of({std::nanf(""), std::nanf("")}); }));
}

}  // namespace
}  // namespace gi

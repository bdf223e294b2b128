// Post-evolution validation: the two-run digest comparison, the >= 16 M
// values over >= 5 workloads accounting, the output digest, and the
// compute-sanitizer helpers run on the CPU; ValidationGpu.* validates the
// convolution seed on its held-out workloads and is SKIPPED ("no CUDA
// device: ...") without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/check/output_digest.hpp"
#include "gi/publish/validation.hpp"
#include "test_support.hpp"

namespace {

using gi::fitness::CheckReport;
using gi::fitness::RunStatus;

CheckReport ok_run(std::size_t values, std::string digest, double abs = 1e-6, double rel = 1e-5) {
  CheckReport c;
  c.values_checked = values;
  c.output_digest = std::move(digest);
  c.max_abs_error = abs;
  c.max_rel_error = rel;
  return c;
}

gi::WorkloadCheck passing(const std::string& which, std::size_t values) {
  return gi::judge_workload(which, ok_run(values, "00000000deadbeef"), ok_run(values, "00000000deadbeef"));
}

// ---- one workload, two runs -----------------------------------------------

TEST(JudgeWorkload, BothOkWithEqualDigestsPasses) {
  const auto w = passing("validate:0", 1000);
  EXPECT_TRUE(w.passed) << w.message;
  EXPECT_TRUE(w.identical);
  EXPECT_EQ(w.values_checked, 1000u);
}

TEST(JudgeWorkload, DifferentDigestsFailNamingBoth) {
  const auto w = gi::judge_workload("validate:1", ok_run(10, "aaaaaaaaaaaaaaaa"), ok_run(10, "bbbbbbbbbbbbbbbb"));
  EXPECT_FALSE(w.passed);
  EXPECT_FALSE(w.identical);
  EXPECT_NE(w.message.find("aaaaaaaaaaaaaaaa"), std::string::npos) << w.message;
  EXPECT_NE(w.message.find("bbbbbbbbbbbbbbbb"), std::string::npos) << w.message;
}

// Float atomics (sums, histograms) leave different bits from run to run; when
// two runs of the plain seed on the same data differ too, the variant's runs
// may differ, as long as each passed the check against the reference.
TEST(JudgeWorkload, DifferentDigestsPassWhereThePlainSeedVariesToo) {
  const auto w = gi::judge_workload("validate:1", ok_run(10, "aaaaaaaaaaaaaaaa"), ok_run(10, "bbbbbbbbbbbbbbbb"), true);
  EXPECT_TRUE(w.passed) << w.message;
  EXPECT_FALSE(w.identical);
  EXPECT_TRUE(w.varies_like_seed);
  EXPECT_NE(w.message.find("as runs of the plain seed do"), std::string::npos) << w.message;
  // A run that fails its check still fails the workload.
  CheckReport wrong = ok_run(10, "cccccccccccccccc");
  wrong.status = RunStatus::WrongOutput;
  EXPECT_FALSE(gi::judge_workload("validate:1", ok_run(10, "aaaaaaaaaaaaaaaa"), wrong, true).passed);
  // Equal digests are no variation.
  EXPECT_FALSE(gi::judge_workload("validate:1", ok_run(10, "aaaaaaaaaaaaaaaa"), ok_run(10, "aaaaaaaaaaaaaaaa"), true)
                   .varies_like_seed);
}

TEST(JudgeWorkload, MissingDigestFails) {
  const auto w = gi::judge_workload("validate:1", ok_run(10, ""), ok_run(10, ""));
  EXPECT_FALSE(w.passed);
  EXPECT_FALSE(w.identical);
  EXPECT_NE(w.message.find("digest"), std::string::npos) << w.message;
}

TEST(JudgeWorkload, AFailedRunFailsTheWorkloadEvenWithEqualDigests) {
  CheckReport wrong = ok_run(10, "0123456789abcdef");
  wrong.status = RunStatus::WrongOutput;
  wrong.message = "output[3] got 1 expected 2";
  const auto first = gi::judge_workload("validate:2", wrong, ok_run(10, "0123456789abcdef"));
  EXPECT_FALSE(first.passed);
  EXPECT_NE(first.message.find("first run: wrong_output"), std::string::npos) << first.message;
  const auto second = gi::judge_workload("validate:2", ok_run(10, "0123456789abcdef"), wrong);
  EXPECT_FALSE(second.passed);
  EXPECT_NE(second.message.find("second run"), std::string::npos) << second.message;
}

// ---- the whole validation's accounting --------------------------------------

TEST(SummarizeValidation, FiveWorkloadsWithSixteenMillionValuesPass) {
  gi::ValidationResult r;
  for (int i = 0; i < 5; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 3'200'000));
  gi::summarize_validation(r);
  EXPECT_EQ(r.output_values, 16'000'000u);
  EXPECT_TRUE(r.passed);
  EXPECT_TRUE(r.problems.empty());
}

TEST(SummarizeValidation, TooFewValuesFailsAndSaysHowMany) {
  gi::ValidationResult r;
  for (int i = 0; i < 6; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 2'666'666));
  gi::summarize_validation(r);
  EXPECT_EQ(r.output_values, 15'999'996u);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("15999996"), std::string::npos) << r.problems[0];
}

// A reduction has one output per workload: its outputs depend on every input,
// so the inputs count toward the size requirement.
TEST(SummarizeValidation, FewOutputsPassOnSixteenMillionInputValues) {
  gi::ValidationResult r;
  for (int i = 0; i < 5; ++i) {
    r.workloads.push_back(passing("validate:" + std::to_string(i), 1));
    r.workloads.back().input_values = 3'200'000;
  }
  gi::summarize_validation(r);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.input_values, 16'000'000u);
  r.workloads.back().input_values -= 1;
  gi::summarize_validation(r);
  EXPECT_FALSE(r.passed);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems.back().find("only 5 output values checked (on 15999999 input values)"), std::string::npos)
      << r.problems.back();
  const gi::ValidationResult back = gi::ValidationResult::from_json(r.to_json());
  EXPECT_EQ(back.input_values, r.input_values);
}

TEST(SummarizeValidation, TooFewWorkloadsFailEvenWithEnoughValues) {
  gi::ValidationResult r;
  for (int i = 0; i < 4; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 10'000'000));
  gi::summarize_validation(r);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("4 validation workloads"), std::string::npos) << r.problems[0];
}

TEST(SummarizeValidation, OneFailingWorkloadFailsAllAndIsNamed) {
  gi::ValidationResult r;
  for (int i = 0; i < 5; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 4'000'000));
  r.workloads[3] = gi::judge_workload("validate:3", ok_run(4'000'000, "1111111111111111"),
                                      ok_run(4'000'000, "2222222222222222"));
  gi::summarize_validation(r);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].rfind("validate:3: ", 0), 0u) << r.problems[0];
}

TEST(SummarizeValidation, MaximumErrorsOverEveryRunButNotOverRunsThatNeverRan) {
  gi::ValidationResult r;
  r.workloads.push_back(gi::judge_workload("validate:0", ok_run(5, "a", 1e-6, 3e-5), ok_run(5, "a", 2e-6, 1e-5)));
  r.workloads.push_back(gi::judge_workload("validate:1", ok_run(5, "b", 7e-7, 4e-5), ok_run(5, "b", 7e-7, 4e-5)));
  gi::WorkloadCheck never = gi::failed_workload("validate:2", "generator failed");
  never.first.max_abs_error = 99;  // a run that checked nothing says nothing about errors
  r.workloads.push_back(never);
  gi::summarize_validation(r);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 2e-6);
  EXPECT_DOUBLE_EQ(r.max_rel_error, 4e-5);
  EXPECT_EQ(r.output_values, 10u);
  EXPECT_FALSE(r.passed);
}

TEST(ValidationResultJson, RoundTripsWorkloadsAndSanitizers) {
  gi::ValidationResult r;
  for (int i = 0; i < 5; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 3'300'000));
  gi::summarize_validation(r);
  r.memcheck = gi::judge_sanitizer("memcheck", 0, "========= ERROR SUMMARY: 0 errors\n");
  r.memcheck.workload = "validate:1";
  r.racecheck.tool = "racecheck";
  r.racecheck.status = "skipped";
  r.racecheck.reason = "compute-sanitizer not found";
  const gi::ValidationResult back = gi::ValidationResult::from_json(r.to_json());
  EXPECT_EQ(back.to_json(), r.to_json());
  EXPECT_TRUE(back.passed);
  EXPECT_TRUE(back.memcheck.passed());
  EXPECT_FALSE(back.fully_passed());  // a skipped sanitizer is not a pass
  EXPECT_EQ(back.workloads[2].first.output_digest, "00000000deadbeef");
}

// synccheck and initcheck: needed where a variant adds barriers or shared
// memory; a validation written before they existed reads as not needing them.
TEST(ValidationResultJson, SyncAndInitCheckAreNeededWhereAVariantAddsBarriersOrSharedMemory) {
  const std::string seed = "__global__ void k(int* b) { atomicAdd(&b[threadIdx.x], 1); }";
  EXPECT_FALSE(gi::adds_barriers_or_shared_memory(seed, seed));
  EXPECT_TRUE(gi::adds_barriers_or_shared_memory(seed, "__global__ void k(int* b) { __shared__ int c[4]; }"));
  EXPECT_TRUE(gi::adds_barriers_or_shared_memory("__syncthreads();", "__syncthreads(); __syncthreads();"));

  gi::ValidationResult r;
  for (int i = 0; i < 5; ++i) r.workloads.push_back(passing("validate:" + std::to_string(i), 3'300'000));
  gi::summarize_validation(r);
  for (auto* s : {&r.memcheck, &r.racecheck}) *s = gi::judge_sanitizer("memcheck", 0, "========= ERROR SUMMARY: 0 errors\n");
  nlohmann::json old = r.to_json();
  old["sanitizer"].erase("synccheck");
  old["sanitizer"].erase("initcheck");
  const gi::ValidationResult before = gi::ValidationResult::from_json(old);
  EXPECT_EQ(before.synccheck.status, "not needed");
  EXPECT_TRUE(before.fully_passed());
  r.synccheck = gi::judge_sanitizer("synccheck", 9, "========= ERROR SUMMARY: 1 error\n");
  r.initcheck.tool = "initcheck";
  r.initcheck.status = "not needed";
  EXPECT_FALSE(gi::ValidationResult::from_json(r.to_json()).fully_passed());
  r.synccheck = gi::judge_sanitizer("synccheck", 0, "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(gi::ValidationResult::from_json(r.to_json()).fully_passed());
}

// ---- output digest ---------------------------------------------------------

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> b;
  for (int v : values) b.push_back(static_cast<std::byte>(v));
  return b;
}

std::string digest_of(const std::vector<std::vector<std::byte>>& buffers) {
  gi::fitness::OutputDigest d;
  for (const auto& b : buffers) d.add(b);
  return d.hex();
}

TEST(OutputDigest, SameBytesSameDigestAnyBitChangesIt) {
  std::vector<std::byte> data(1003);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 7 + 3);
  const std::string d = digest_of({data});
  EXPECT_EQ(d.size(), 16u);
  EXPECT_EQ(d, digest_of({data}));
  for (std::size_t at : {std::size_t{0}, std::size_t{500}, std::size_t{1002}}) {  // a whole word, the tail word
    auto flipped = data;
    flipped[at] ^= std::byte{0x01};
    EXPECT_NE(digest_of({flipped}), d) << "byte " << at;
  }
}

TEST(OutputDigest, BufferBoundariesAndTrailingZerosCount) {
  EXPECT_NE(digest_of({bytes({1, 2, 3, 4})}), digest_of({bytes({1, 2}), bytes({3, 4})}));
  EXPECT_NE(digest_of({bytes({1, 2, 3})}), digest_of({bytes({1, 2, 3, 0})}));
  EXPECT_NE(digest_of({bytes({1}), bytes({2})}), digest_of({bytes({2}), bytes({1})}));
  EXPECT_NE(digest_of({}), digest_of({bytes({})}));
}

// ---- compute-sanitizer helpers --------------------------------------------

TEST(Sanitizer, SummaryLineIsTheLastSummaryWithoutItsPrefix) {
  const std::string memcheck =
      "========= COMPUTE-SANITIZER\n{\"ok\": true}\n========= ERROR SUMMARY: 0 errors\n";
  EXPECT_EQ(gi::sanitizer_summary_line(memcheck), "ERROR SUMMARY: 0 errors");
  const std::string racecheck =
      "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\r\n";
  EXPECT_EQ(gi::sanitizer_summary_line(racecheck), "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)");
  EXPECT_EQ(gi::sanitizer_summary_line("gi: error: no CUDA device\n"), "");
}

TEST(Sanitizer, JudgedByExitCodeAndSummary) {
  EXPECT_EQ(gi::judge_sanitizer("memcheck", 0, "========= ERROR SUMMARY: 0 errors\n").status, "passed");
  const auto errors = gi::judge_sanitizer("memcheck", 9, "========= Invalid __global__ write\n========= ERROR SUMMARY: 3 errors\n");
  EXPECT_EQ(errors.status, "failed");
  EXPECT_EQ(errors.summary, "ERROR SUMMARY: 3 errors");
  EXPECT_NE(errors.output_tail.find("Invalid __global__ write"), std::string::npos);
  EXPECT_EQ(gi::judge_sanitizer("racecheck", 124, "").status, "timed out");
  EXPECT_EQ(gi::judge_sanitizer("memcheck", 0, "no summary\n").status, "failed");  // did not run under the tool
  EXPECT_EQ(gi::judge_sanitizer("memcheck", 1, "========= ERROR SUMMARY: 0 errors\n").status, "failed");  // gi check failed
}

TEST(Sanitizer, PicksTheSmallestWorkloadThatStillRunsTheGeneralPath) {
  // convolution_x's validation workloads, values checked.
  const std::vector<std::size_t> values{17'694'720, 3'650'692, 8'190'948, 81'920, 12'804, 40'873'252};
  EXPECT_EQ(gi::pick_sanitizer_workload(values, std::size_t{1} << 20), 1u);
  EXPECT_EQ(gi::pick_sanitizer_workload(values, 0), 4u);
  EXPECT_EQ(gi::pick_sanitizer_workload({10, 30, 20}, 1000), 1u);  // none large enough: the largest
  EXPECT_THROW(gi::pick_sanitizer_workload({}, 1), std::invalid_argument);
}

TEST(Sanitizer, ShellQuotingSurvivesTheShell) {
  EXPECT_EQ(gi::shell_quote("a b"), "'a b'");
  EXPECT_EQ(gi::shell_quote("it's"), "'it'\\''s'");
  const std::string file = std::filesystem::temp_directory_path() / ("gi validation 'quote' " + std::to_string(::getpid()));
  ASSERT_EQ(std::system(("printf x > " + gi::shell_quote(file)).c_str()), 0);
  EXPECT_TRUE(std::filesystem::exists(file));
  std::filesystem::remove(file);
}

// ---- on the GPU ------------------------------------------------------------

bool gpu_available() {
  static const auto env = gi::fitness::probe_cuda();
  return env.driver_ok && !env.gpus.empty();
}

TEST(ValidationGpu, ConvolutionSeedPassesItsHeldOutWorkloadsTwiceIdentically) {
  if (!gpu_available()) GTEST_SKIP() << "no CUDA device: " << gi::fitness::probe_cuda().message;
  const auto dir = gi::test::source_dir() / "seeds/tools/convolution_x";
  const gi::Seed seed = gi::load_seed(dir);
  const auto spec = gi::fitness::load_kernel_spec(dir);
  gi::ValidationOptions o;
  o.gi_binary = gi::test::gi_binary();
  o.cache_dir = std::filesystem::temp_directory_path() / "gi-gpu-test-cache";
  o.sanitizers = false;
  const auto r = gi::validate(seed, spec, {}, gi::Tuning{spec.default_block_size, {}}, o);
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.workloads.size(), spec.validate.size());
  EXPECT_GE(r.output_values, gi::kMinValidationValues);
  for (const auto& w : r.workloads) {
    EXPECT_TRUE(w.identical) << w.which;
    EXPECT_EQ(w.first.output_digest.size(), 16u) << w.which;
  }
  EXPECT_EQ(r.memcheck.status, "skipped");
}

}  // namespace

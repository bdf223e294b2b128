// Running variants on the GPU: output checks (NaN fill, guards, inputs),
// error classification, timing, and process isolation through the worker.
// The OutputCheck, WorkerProtocol and WorkerProcess tests need no GPU; the
// GpuRunner* and Timing* GPU tests are SKIPPED ("no CUDA device: ...")
// without one.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fitness/instrument/clock_instrument.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/device_buffers.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/check/output_check.hpp"
#include "fitness/workload/plan_io.hpp"
#include "fitness/timing/timing_statistics.hpp"
#include "fitness/gpu/worker_loop.hpp"
#include "fitness/process/worker.hpp"
#include "plan_helpers.hpp"
#include "texture_samples.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;
using nlohmann::json;
using std::chrono::milliseconds;

std::string test_worker_path() {
  const char* env = std::getenv("GI_TEST_WORKER");
  return env && *env ? env : GI_TEST_WORKER;
}

using gi::test::bytes_of;
using gi::test::scalar;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- OutputChecker (CPU) ----------------------------------------------------

std::vector<std::byte> nan_filled(std::size_t bytes) {
  std::vector<std::byte> b(bytes);
  for (std::size_t i = 0; i < bytes; i += 4) std::memcpy(b.data() + i, &kNanFillWord, 4);
  return b;
}

TEST(OutputCheck, WithinToleranceIsOkWithErrorStatistics) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F32, 3, {}};
  const std::vector<float> got{1.0f, 2.0f, 3.0001f};
  OutputChecker c(Tolerance{1e-5, 1e-4});
  EXPECT_TRUE(c.check(out, bytes_of(got), ExpectedOutput{"out", {1, 2, 3}, std::nullopt, {}}));
  const CheckReport r = c.report();
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.values_checked, 3u);
  EXPECT_NEAR(r.max_abs_error, 1e-4, 1e-6);
  EXPECT_NEAR(r.max_rel_error, 1e-4 / 3, 1e-6);
  EXPECT_NEAR(r.rms_error, 1e-4 / std::sqrt(3.0), 1e-6);
}

TEST(OutputCheck, WrongValueNamesBufferElementGotAndExpected) {
  const BufferArg out{"field", ParamRole::Out, ElementType::F32x2, 2, {}};
  const std::vector<float> got{1, 2, 3, 5};
  OutputChecker c(Tolerance{});
  EXPECT_FALSE(c.check(out, bytes_of(got), ExpectedOutput{"field", {1, 2, 3, 4}, std::nullopt, {}}));
  const CheckReport r = c.report();
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "'field' element 1 component 1: got 5, expected 4")) << r.message;
}

TEST(OutputCheck, UnwrittenElementIsCaughtAsTheNanFill) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F32, 4, {}};
  std::vector<std::byte> got = nan_filled(16);
  const float v[3] = {1, 2, 4};
  std::memcpy(got.data(), v, 8);
  std::memcpy(got.data() + 12, v + 2, 4);  // element 2 left unwritten
  OutputChecker c(Tolerance{});
  c.check(out, got, ExpectedOutput{"out", {1, 2, 3, 4}, std::nullopt, {}});
  const CheckReport r = c.report();
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "element 2")) << r.message;
  EXPECT_TRUE(contains(r.message, "NaN fill")) << r.message;
}

TEST(OutputCheck, InfinityAndComputedNanFail) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F64, 2, {}};
  const std::vector<double> got{std::numeric_limits<double>::infinity(), -std::nan("")};
  OutputChecker c(Tolerance{1e9, 1e9});
  c.check(out, bytes_of(got), ExpectedOutput{"out", {1, 2}, std::nullopt, {}});
  const CheckReport r = c.report();
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "element 0: got inf")) << r.message;
  EXPECT_TRUE(contains(r.message, "2 failures")) << r.message;
}

TEST(OutputCheck, ElementsOutsideWrittenSetMustKeepTheFill) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F32, 3, {}};
  std::vector<std::byte> got = nan_filled(12);
  const float one = 1;
  std::memcpy(got.data(), &one, 4);
  ExpectedOutput only_first{"out", {1, 0, 0}, std::vector<std::uint32_t>{0}, {}};
  {
    OutputChecker c(Tolerance{});
    EXPECT_TRUE(c.check(out, got, only_first));
    EXPECT_EQ(c.report().values_checked, 1u);
  }
  std::memcpy(got.data() + 8, &one, 4);  // writes element 2 as well
  OutputChecker c(Tolerance{});
  EXPECT_FALSE(c.check(out, got, only_first));
  EXPECT_TRUE(contains(c.report().message, "element 2: written, but the reference leaves it"))
      << c.report().message;
}

// A failure found on the device is judged again on the host, element by
// element: describe_element_failure says nothing for an element that passes.
TEST(OutputCheck, DescribingAPassingElementGivesNoMessage) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F32x2, 2, {}};
  const std::vector<float> got{1, 2, 3, 5};
  const ExpectedOutput expected{"out", {1, 2, 3, 4}, std::nullopt, {}};
  const auto* element = reinterpret_cast<const std::byte*>(got.data());
  EXPECT_FALSE(describe_element_failure(out, element, 0, expected, true, Tolerance{}));
  const auto failing = describe_element_failure(out, element + 8, 1, expected, true, Tolerance{});
  ASSERT_TRUE(failing);
  EXPECT_TRUE(contains(*failing, "element 1 component 1: got 5, expected 4")) << *failing;
  // An element the seed leaves alone passes while it keeps the NaN fill.
  const std::vector<std::byte> fill = nan_filled(8);
  EXPECT_FALSE(describe_element_failure(out, fill.data(), 0, expected, false, Tolerance{}));
  EXPECT_TRUE(describe_element_failure(out, element, 0, expected, false, Tolerance{}));
}

// A reference that is no number (the seed, its own reference, computed none
// on these inputs) fails every value, and the message says what to change.
TEST(OutputCheck, AReferenceThatIsNoNumberSaysTheInputsMustChange) {
  const BufferArg out{"speed", ParamRole::Out, ElementType::F32, 2, {}};
  const std::vector<float> got{std::nanf(""), 1.f};
  const ExpectedOutput expected{"speed", {std::nan(""), std::nan("")}, std::nullopt, {}};
  const auto* element = reinterpret_cast<const std::byte*>(got.data());
  for (std::size_t e = 0; e < 2; ++e) {
    const auto failing = describe_element_failure(out, element + 4 * e, e, expected, true, Tolerance{});
    ASSERT_TRUE(failing);
    EXPECT_TRUE(contains(*failing, "the reference is not finite either")) << *failing;
    EXPECT_TRUE(contains(*failing, "give its inputs a range where it is defined (gi init --like")) << *failing;
  }
}

TEST(OutputCheck, UncheckedComponentsAreIgnored) {
  const BufferArg out{"p", ParamRole::Out, ElementType::F32x4, 1, {}};
  const std::vector<float> got{1, 2, 3, std::nanf("")};
  OutputChecker c(Tolerance{});
  EXPECT_TRUE(c.check(out, bytes_of(got), ExpectedOutput{"p", {1, 2, 3, 0}, std::nullopt, {0, 1, 2}}));
  EXPECT_EQ(c.report().values_checked, 3u);
}

TEST(OutputCheck, ReferenceThatDoesNotFitThrows) {
  const BufferArg out{"out", ParamRole::Out, ElementType::F32, 2, {}};
  OutputChecker c(Tolerance{});
  EXPECT_THROW(c.check(out, nan_filled(8), ExpectedOutput{"out", {1}, std::nullopt, {}}),
               std::invalid_argument);
  EXPECT_THROW(c.check(out, nan_filled(8), ExpectedOutput{"out", {1, 2}, std::vector<std::uint32_t>{5}, {}}),
               std::invalid_argument);
}

// ---- guard patterns (CPU) -------------------------------------------------------

bool quiet_nan_float(std::uint32_t word) {
  float f;
  std::memcpy(&f, &word, 4);
  return std::isnan(f) && (word & 0x00400000u) != 0;
}

TEST(GuardPattern, FloatBuffersAreGuardedByAQuietNanOfTheirElementWidth) {
  for (ElementType t : {ElementType::F32, ElementType::F32x2, ElementType::F32x4}) {
    EXPECT_TRUE(quiet_nan_float(guard_word(t))) << static_cast<int>(t);
  }
  // Two guard words make the 8-byte double a reader past the end gets.
  const std::uint64_t two = (static_cast<std::uint64_t>(guard_word(ElementType::F64)) << 32) |
                            guard_word(ElementType::F64);
  double d;
  std::memcpy(&d, &two, 8);
  EXPECT_TRUE(std::isnan(d));
  EXPECT_NE(two & (1ull << 51), 0u) << "not a quiet NaN";
  // Writes of the output fill or of the NaN GPU arithmetic makes still show.
  EXPECT_NE(guard_word(ElementType::F32), kNanFillWord);
  EXPECT_NE(guard_word(ElementType::F32), 0x7FFFFFFFu);
}

TEST(GuardPattern, AnIndexReadFromPastAnIntegerBufferPointsGigabytesAway) {
  for (ElementType t : {ElementType::I32, ElementType::U32, ElementType::I32x4}) {
    const std::uint32_t word = guard_word(t);
    std::int32_t as_int;
    std::memcpy(&as_int, &word, 4);
    EXPECT_LT(static_cast<std::int64_t>(as_int) * 4, -(std::int64_t{4} << 30)) << static_cast<int>(t);
    EXPECT_GT(static_cast<std::uint64_t>(word) * 4, std::uint64_t{8} << 30) << static_cast<int>(t);
  }
}

// ---- worker protocol and parent (CPU) -----------------------------------------

std::vector<json> serve(const std::string& requests) {
  std::istringstream in(requests);
  std::ostringstream out;
  EXPECT_EQ(run_worker_loop(in, out, 0), 0);
  std::vector<json> replies;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) replies.push_back(json::parse(line));
  return replies;
}

TEST(WorkerProtocol, AnswersEveryLineWithOneLine) {
  const auto replies = serve(
      "{\"cmd\":\"ping\"}\n"
      "not json\n"
      "[1,2]\n"
      "{\"cmd\":\"dance\"}\n"
      "{\"cmd\":\"eval\",\"cubin_file\":\"x\"}\n"
      "{\"cmd\":\"load_plan\"}\n"
      "{\"cmd\":\"quit\"}\n"
      "{\"cmd\":\"ping\"}\n");
  ASSERT_EQ(replies.size(), 7u);  // nothing after quit
  EXPECT_EQ(replies[0]["status"], "ok");
  EXPECT_TRUE(replies[0].contains("pid"));
  EXPECT_EQ(replies[1]["status"], "error");
  EXPECT_TRUE(contains(replies[1]["message"], "not JSON"));
  EXPECT_EQ(replies[2]["status"], "error");
  EXPECT_TRUE(contains(replies[3]["message"], "unknown cmd 'dance'"));
  EXPECT_TRUE(contains(replies[4]["message"], "eval before load_plan"));
  EXPECT_TRUE(contains(replies[5]["message"], "plan_file"));
  EXPECT_EQ(replies[6]["status"], "ok");
}

TEST(WorkerProtocol, EvalRequestCarriesEveryField) {
  EvalRequest r;
  r.cubin_file = "/tmp/k.cubin";
  r.entry = "k";
  r.block = std::array<unsigned, 3>{128, 1, 1};
  r.timing.min_samples = 12;
  r.kernel_timeout = milliseconds(1500);
  const json j = to_json(r);
  EXPECT_EQ(j["cmd"], "eval");
  EXPECT_EQ(j["cubin_file"], "/tmp/k.cubin");
  EXPECT_EQ(j["block"], json({128, 1, 1}));
  EXPECT_FALSE(j.contains("grid"));
  EXPECT_EQ(j["timing"]["min_samples"], 12);
  EXPECT_EQ(j["timeout_ms"], 1500);
}

TEST(WorkerProcess, PingsTheTestWorker) {
  WorkerProcess w(test_worker_path(), {"0"});
  const WorkerReply r = w.ping();
  EXPECT_FALSE(r.request_failed) << r.message;
  EXPECT_FALSE(r.worker_died) << r.message;
  EXPECT_EQ(r.body["pid"], w.pid());
  EXPECT_EQ(w.restarts(), 0);
  w.stop();
  EXPECT_FALSE(w.running());
}

TEST(WorkerProcess, MissingExecutableThrowsOnStart) {
  WorkerProcess w("/nonexistent/gi-worker", {});
  try {
    w.start();
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "/nonexistent/gi-worker")) << e.what();
  }
}

TEST(WorkerProcess, CrashWithoutReplyIsReportedAndTheNextCallRestarts) {
  // A stand-in worker that dies of SIGSEGV on its first request.
  WorkerProcess w("/bin/sh", {"-c", "read line; kill -SEGV $$"});
  const WorkerReply r = w.ping(milliseconds(5000));
  EXPECT_TRUE(r.worker_died);
  EXPECT_EQ(r.status, RunStatus::Trap);
  EXPECT_TRUE(contains(r.message, "worker died")) << r.message;
  EXPECT_TRUE(contains(r.message, "signal 11")) << r.message;
  EXPECT_FALSE(w.running());
  const WorkerReply again = w.ping(milliseconds(5000));  // restarts, dies again
  EXPECT_EQ(w.restarts(), 1);
  EXPECT_TRUE(again.worker_died);
}

TEST(WorkerProcess, SilentWorkerTimesOutAndIsKilled) {
  WorkerProcess w("/bin/sh", {"-c", "read line; sleep 60"});
  const auto start = std::chrono::steady_clock::now();
  const WorkerReply r = w.ping(milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, RunStatus::Timeout);
  EXPECT_TRUE(r.worker_died);
  EXPECT_TRUE(contains(r.message, "did not answer within 300 ms")) << r.message;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_FALSE(w.running());
}

TEST(WorkerProcess, LoadPlanWithoutGpuSaysNoCudaDevice) {
  if (probe_cuda().driver_ok) GTEST_SKIP() << "a CUDA device is present";
  WorkerProcess w(test_worker_path(), {"0"});
  const WorkerReply r = w.load_plan("/nonexistent.plan");
  EXPECT_TRUE(r.request_failed);
  EXPECT_TRUE(contains(r.message, "no CUDA device")) << r.message;
  EXPECT_FALSE(r.worker_died);
}

// ---- GPU ------------------------------------------------------------------------

const char* kKernels = R"(
extern "C" __global__ void scale(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
}
extern "C" __global__ void scale_wrong(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i] + (i == 777 ? 0.5f : 0.0f);
}
extern "C" __global__ void scale_skips_one(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i != 4242) out[i] = a * in[i];
}
extern "C" __global__ void scale_modifies_input(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 5) const_cast<float*>(in)[5] = 0.0f;
}
extern "C" __global__ void scale_past_end(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 0) out[n] = 1.0f;
}
extern "C" __global__ void scale_before_start(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 0) out[-3] = 1.0f;
}
extern "C" __global__ void scale_forever(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 0) { while (clock64() >= 0) {} }
}
extern "C" __global__ void scale_far_away(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 0) out[(1ull << 36) + 17] = a;
}
extern "C" __global__ void scale_trap(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 100) __trap();
}
__constant__ int c_Count;
__constant__ float c_Weight;
extern "C" __global__ void scale_by_constants(float* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < c_Count) x[i] *= c_Weight;
}
// Vectors by value: an int3 of 12 bytes, a float2 of 8.
extern "C" __global__ void vector_scalars(float* y, int3 dim, float2 w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < dim.x * dim.y * dim.z) y[i] = w.x * i + w.y;
}
// 8-bit and uchar4 buffers (an odd length: the data ends inside a word);
// mode 1 leaves element 7 unwritten, mode 2 writes one byte past the end.
extern "C" __global__ void narrow_threshold(const unsigned char* image, unsigned char* mask, uchar4* rgba, int n,
                                            short level, int mode) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (mode == 1 && i == 7) return;
  if (i < n + (mode == 2)) mask[i] = image[i < n ? i : 0] > level ? 255 : 0;
  if (i < n) rgba[i] = make_uchar4(image[i], 0, 255 - image[i], 255);
}
// A float4 buffer read through a texture object, and a bool by value.
extern "C" __global__ void texture_scale(cudaTextureObject_t x, float* y, int n, bool twice) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = tex1Dfetch<float4>(x, i);
    y[i] = twice ? 2.0f * (v.x + v.w) : v.x + v.w;
  }
}
extern "C" __global__ void scale_in_place(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i];
}
extern "C" __global__ void scale_evens(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 0) out[i] = a * in[i];
}
extern "C" __global__ void scale_nan_past_end(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * in[i];
  if (i == 0) out[n] = __int_as_float(0x7FFFFFFF);
}
// out[i] = a * (in[i] (1 - w) + in[next] w), w = 0.5, and w = 0 for the last
// element: its neighbour weighs nothing, as a border corner in resampling.
extern "C" __global__ void blend_next_clamped(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float w = i + 1 < n ? 0.5f : 0.0f;
    out[i] = a * (in[i] * (1.0f - w) + in[min(i + 1, n - 1)] * w);
  }
}
extern "C" __global__ void blend_next_unclamped(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float w = i + 1 < n ? 0.5f : 0.0f;
    out[i] = a * (in[i] * (1.0f - w) + in[i + 1] * w);
  }
}
// The same from the other end: element 0 reads one before the start.
extern "C" __global__ void blend_previous_unclamped(const float* in, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float w = i > 0 ? 0.5f : 0.0f;
    out[i] = a * (in[i] * (1.0f - w) + in[i - 1] * w);
  }
}
extern "C" __global__ void blend_next_unclamped_double(const double* in, double* out, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double w = i + 1 < n ? 0.5 : 0.0;
    out[i] = a * (in[i] * (1.0 - w) + in[i + 1] * w);
  }
}
extern "C" __global__ void copy4(const float4* in, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
extern "C" __global__ void copy4_half(const float4* in, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n / 2) out[i] = in[i];
}
)";

constexpr int kN = (1 << 20) + 3;  // not a multiple of the block
constexpr float kScale = 2.5f;

// The shared runner and the compiled kernels; skipped without a GPU.
class GpuFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!gpu_available()) return;
    runner_ = new GpuRunner(0);
    Compiler compiler(std::nullopt);
    CompileRequest request;
    request.source = std::string(kKernels) + gi::test::kSampleVolume;
    request.file_name = "planted.cu";
    request.arch = runner_->arch();
    const CompileResult compiled = compiler.compile(request);
    if (!compiled.ok) {
      compile_error_ = new std::string(compiled.error + "\n" + compiled.log);
      return;
    }
    cubin_ = new std::vector<char>(compiled.cubin);
  }
  static void TearDownTestSuite() {
    delete runner_;
    runner_ = nullptr;
    delete cubin_;
    cubin_ = nullptr;
  }
  static bool gpu_available() {
    static const CudaEnvironment env = probe_cuda();
    return env.driver_ok && !env.gpus.empty();
  }
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << probe_cuda().message;
    ASSERT_EQ(compile_error_, nullptr) << *compile_error_;
  }

  LoadedKernel kernel(const std::string& entry) {
    LoadResult r = runner_->load(*cubin_, entry);
    EXPECT_TRUE(r.ok()) << r.message;
    return std::move(*r.kernel);
  }

  static LaunchPlan scale_plan() {
    std::vector<float> in(kN);
    for (int i = 0; i < kN; ++i) in[i] = std::sin(0.001f * static_cast<float>(i)) + 1.5f;
    LaunchPlan p;
    p.entry = "scale";
    p.buffers.push_back({"in", ParamRole::In, ElementType::F32, static_cast<std::size_t>(kN), bytes_of(in)});
    p.buffers.push_back({"out", ParamRole::Out, ElementType::F32, static_cast<std::size_t>(kN), {}});
    p.scalars.push_back(scalar("a", kScale));
    p.scalars.push_back(scalar("n", kN));
    p.params = {{true, 0}, {true, 1}, {false, 0}, {false, 1}};
    p.block = {256, 1, 1};
    p.grid = {(kN + 255) / 256, 1, 1};
    return p;
  }
  static std::vector<ExpectedOutput> scale_reference(const LaunchPlan& p) {
    ExpectedOutput e;
    e.buffer = "out";
    std::vector<float> in(kN);
    std::memcpy(in.data(), p.buffers[0].initial.data(), in.size() * 4);
    for (float x : in) e.values.push_back(static_cast<double>(kScale) * x);
    return {e};
  }

  static inline GpuRunner* runner_ = nullptr;
  static inline std::vector<char>* cubin_ = nullptr;
  static inline std::string* compile_error_ = nullptr;
};

class GpuRunnerCheck : public GpuFixture {};

TEST_F(GpuRunnerCheck, CorrectKernelIsOk) {
  const LaunchPlan p = scale_plan();
  const CheckReport r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::Ok) << r.message;
  EXPECT_EQ(r.values_checked, static_cast<std::size_t>(kN));
  EXPECT_LT(r.max_rel_error, 1e-6);
}

TEST_F(GpuRunnerCheck, WrongAnswerIsWrongOutput) {
  const LaunchPlan p = scale_plan();
  const CheckReport r = runner_->run_checked(kernel("scale_wrong"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "buffer 'out' element 777: got")) << r.message;
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-3);
}

TEST_F(GpuRunnerCheck, UnwrittenElementIsCaughtByTheNanFill) {
  const LaunchPlan p = scale_plan();
  // A correct run first: the NaN fill must be redone before every checked run.
  EXPECT_TRUE(runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{}).ok());
  const CheckReport r = runner_->run_checked(kernel("scale_skips_one"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "element 4242: got nan")) << r.message;
  EXPECT_TRUE(contains(r.message, "NaN fill")) << r.message;
}

TEST_F(GpuRunnerCheck, ModifiedInputIsInputModified) {
  const LaunchPlan p = scale_plan();
  const CheckReport r = runner_->run_checked(kernel("scale_modifies_input"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::InputModified);
  EXPECT_TRUE(contains(r.message, "'in'")) << r.message;
  EXPECT_TRUE(contains(r.message, "element 5")) << r.message;
  // The next run gets the pristine input again (re-uploaded).
  const CheckReport ok = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_TRUE(ok.ok()) << ok.message;
}

TEST_F(GpuRunnerCheck, WriteJustPastTheEndIsGuardViolation) {
  const LaunchPlan p = scale_plan();
  CheckReport r = runner_->run_checked(kernel("scale_past_end"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::GuardViolation);
  EXPECT_TRUE(contains(r.message, "after buffer 'out'")) << r.message;
  EXPECT_TRUE(contains(r.message, "byte 0 bytes after")) << r.message;
  // Reported as "before", not as the stale "after" of the previous variant.
  r = runner_->run_checked(kernel("scale_before_start"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::GuardViolation);
  EXPECT_TRUE(contains(r.message, "before buffer 'out'")) << r.message;
  EXPECT_TRUE(contains(r.message, "12 bytes before")) << r.message;
  // The guards are restored for the next variant.
  r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(GpuRunnerCheck, WriteOfNanPastTheEndIsStillAGuardViolation) {
  const LaunchPlan p = scale_plan();
  CheckReport r = runner_->run_checked(kernel("scale_nan_past_end"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::GuardViolation);
  EXPECT_TRUE(contains(r.message, "after buffer 'out'")) << r.message;
  r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_TRUE(r.ok()) << r.message;
}

// A read outside a float input must fail the check even where the value
// read is multiplied by zero (the NaN guard), and a read inside must pass.
TEST_F(GpuRunnerCheck, ReadOnePastTheEndOfAFloatInputFailsAndReadingInsidePasses) {
  const LaunchPlan p = scale_plan();
  std::vector<float> in(kN);
  std::memcpy(in.data(), p.buffers[0].initial.data(), in.size() * 4);
  ExpectedOutput next{"out", {}, std::nullopt, {}}, previous{"out", {}, std::nullopt, {}};
  for (int i = 0; i < kN; ++i) {
    next.values.push_back(kScale * (i + 1 < kN ? 0.5 * in[i] + 0.5 * in[i + 1] : static_cast<double>(in[i])));
    previous.values.push_back(kScale * (i > 0 ? 0.5 * in[i] + 0.5 * in[i - 1] : static_cast<double>(in[i])));
  }
  CheckReport r = runner_->run_checked(kernel("blend_next_clamped"), p, {next}, Tolerance{});
  EXPECT_TRUE(r.ok()) << r.message;
  r = runner_->run_checked(kernel("blend_next_unclamped"), p, {next}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  // A NaN the kernel computed (not the output fill), at the one element that read past the end.
  EXPECT_TRUE(contains(r.message, "element " + std::to_string(kN - 1) + ": got ")) << r.message;
  EXPECT_TRUE(contains(r.message, "nan, expected")) << r.message;
  EXPECT_TRUE(contains(r.message, "(not finite)")) << r.message;
  EXPECT_FALSE(contains(r.message, "failures in all")) << r.message;
  r = runner_->run_checked(kernel("blend_previous_unclamped"), p, {previous}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "element 0: got ")) << r.message;
  EXPECT_TRUE(contains(r.message, "(not finite)")) << r.message;
}

TEST_F(GpuRunnerCheck, ReadOnePastTheEndOfADoubleInputFails) {
  constexpr int n = 4099;
  std::vector<double> in(n);
  for (int i = 0; i < n; ++i) in[i] = 1.0 + 0.25 * (i % 7);
  LaunchPlan p;
  p.buffers.push_back({"in", ParamRole::In, ElementType::F64, n, bytes_of(in)});
  p.buffers.push_back({"out", ParamRole::Out, ElementType::F64, n, {}});
  p.scalars = {scalar("a", 2.0), scalar("n", n)};
  p.params = {{true, 0}, {true, 1}, {false, 0}, {false, 1}};
  p.block = {128, 1, 1};
  p.grid = {(n + 127) / 128, 1, 1};
  ExpectedOutput e{"out", {}, std::nullopt, {}};
  for (int i = 0; i < n; ++i) e.values.push_back(2.0 * (i + 1 < n ? 0.5 * in[i] + 0.5 * in[i + 1] : in[i]));
  const CheckReport r = runner_->run_checked(kernel("blend_next_unclamped_double"), p, {e}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(r.message, "element " + std::to_string(n - 1) + ": got ")) << r.message;
  EXPECT_TRUE(contains(r.message, "(not finite)")) << r.message;
}

TEST_F(GpuRunnerCheck, InOutIsRestoredBeforeEveryCheckedRun) {
  std::vector<float> x(1000);
  for (int i = 0; i < 1000; ++i) x[i] = static_cast<float>(i);
  LaunchPlan p;
  p.buffers.push_back({"x", ParamRole::InOut, ElementType::F32, 1000, bytes_of(x)});
  p.scalars = {scalar("a", 3.0f), scalar("n", 1000)};
  p.params = {{true, 0}, {false, 0}, {false, 1}};
  p.block = {128, 1, 1};
  p.grid = {8, 1, 1};
  ExpectedOutput e{"x", {}, std::nullopt, {}};
  for (float v : x) e.values.push_back(3.0 * v);
  const LoadedKernel k = kernel("scale_in_place");
  for (int run = 0; run < 2; ++run) {
    const CheckReport r = runner_->run_checked(k, p, {e}, Tolerance{});
    EXPECT_TRUE(r.ok()) << "run " << run << ": " << r.message;
  }
}

// The plan's __constant__ values reach the kernel, a second plan's replace
// the first's, and timing keeps them.
TEST_F(GpuRunnerCheck, ConstantsAreSetBeforeTheLaunch) {
  std::vector<float> x(1000, 2.0f);
  LaunchPlan p;
  p.buffers.push_back({"x", ParamRole::InOut, ElementType::F32, 1000, bytes_of(x)});
  p.params = {{true, 0}};
  p.block = {128, 1, 1};
  p.grid = {8, 1, 1};
  const LoadedKernel k = kernel("scale_by_constants");
  for (const auto& [count, weight] : {std::pair{600, 3.0f}, std::pair{1000, 0.5f}, std::pair{600, 3.0f}}) {
    p.constants = {scalar("c_Count", count), scalar("c_Weight", weight)};
    ExpectedOutput e{"x", std::vector<double>(1000, 2.0), std::nullopt, {}};
    for (int i = 0; i < count; ++i) e.values[static_cast<std::size_t>(i)] = 2.0 * weight;
    const CheckReport r = runner_->run_checked(k, p, {e}, Tolerance{0, 0});
    EXPECT_TRUE(r.ok()) << count << ": " << r.message;
  }
  p.constants = {scalar("c_Missing", 1)};
  const CheckReport missing = runner_->run_checked(k, p, {}, Tolerance{});
  EXPECT_EQ(missing.status, RunStatus::LaunchError);
  EXPECT_TRUE(contains(missing.message, "'c_Missing'")) << missing.message;
  p.constants = {scalar("c_Count", 1.0)};  // 8 bytes for a 4-byte int
  const CheckReport wide = runner_->run_checked(k, p, {}, Tolerance{});
  EXPECT_EQ(wide.status, RunStatus::LaunchError);
  EXPECT_TRUE(contains(wide.message, "is 4 bytes, the plan gives 8")) << wide.message;
}

// A vector passed by value reaches the kernel as its components' bytes.
TEST_F(GpuRunnerCheck, VectorScalarsPassTheirComponents) {
  LaunchPlan p;
  p.buffers.push_back({"y", ParamRole::Out, ElementType::F32, 1000, {}});
  p.params = {{true, 0}, {false, 0}, {false, 1}};
  p.scalars = {ScalarArg{"dim", bytes_of(std::vector<int>{10, 20, 3})}, ScalarArg{"w", bytes_of(std::vector<float>{0.5f, 2})}};
  p.block = {128, 1, 1};
  p.grid = {8, 1, 1};
  ExpectedOutput e{"y", std::vector<double>(1000), std::nullopt, {}};
  for (int i = 0; i < 1000; ++i) e.values[static_cast<std::size_t>(i)] = i < 600 ? 0.5 * i + 2 : std::nan("");
  e.written_elements.emplace();
  for (std::uint32_t i = 0; i < 600; ++i) e.written_elements->push_back(i);
  const CheckReport r = runner_->run_checked(kernel("vector_scalars"), p, {e}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
}

// 8- and 16-bit scalars and buffers, and uchar4: checked on the host (the
// device's check reads 32-bit words), filled with kSubWordFillByte, and an
// odd length's guard still catches the byte after the last element.
TEST_F(GpuRunnerCheck, NarrowIntegerBuffersAreFilledGuardedAndChecked) {
  constexpr int n = 1003;
  std::vector<std::uint8_t> image(n);
  for (int i = 0; i < n; ++i) image[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 37);
  LaunchPlan p;
  p.buffers.push_back({"image", ParamRole::In, ElementType::U8, n, bytes_of(image)});
  p.buffers.push_back({"mask", ParamRole::Out, ElementType::U8, n, {}});
  p.buffers.push_back({"rgba", ParamRole::Out, ElementType::U8x4, n, {}});
  p.params = {{true, 0}, {true, 1}, {true, 2}, {false, 0}, {false, 1}, {false, 2}};
  p.block = {128, 1, 1};
  p.grid = {8, 1, 1};
  ExpectedOutput mask{"mask", std::vector<double>(n), std::nullopt, {}};
  ExpectedOutput rgba{"rgba", std::vector<double>(4 * n), std::nullopt, {}};
  for (std::size_t i = 0; i < n; ++i) {
    mask.values[i] = image[i] > 100 ? 255 : 0;
    rgba.values[4 * i] = image[i];
    rgba.values[4 * i + 1] = 0;
    rgba.values[4 * i + 2] = 255 - image[i];
    rgba.values[4 * i + 3] = 255;
  }
  const LoadedKernel k = kernel("narrow_threshold");
  auto run = [&](int mode) {
    p.scalars = {scalar("n", n), ScalarArg{"level", bytes_of(std::vector<std::int16_t>{100})}, scalar("mode", mode)};
    return runner_->run_checked(k, p, {mask, rgba}, Tolerance{0, 0});
  };
  const CheckReport good = run(0);
  EXPECT_TRUE(good.ok()) << good.message;
  EXPECT_EQ(good.values_checked, 5u * n);
  const CheckReport unwritten = run(1);
  EXPECT_EQ(unwritten.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(unwritten.message, "buffer 'mask' element 7: got 167")) << unwritten.message;
  const CheckReport past_end = run(2);
  EXPECT_EQ(past_end.status, RunStatus::GuardViolation);
  EXPECT_TRUE(contains(past_end.message, "guard region after buffer 'mask' was written: byte 0 bytes after the end"))
      << past_end.message;
  EXPECT_TRUE(run(0).ok());  // the guard is set again after a violation
}

// A texture buffer reaches the kernel as a texture object over its data,
// and a bool scalar as one byte.
TEST_F(GpuRunnerCheck, ATextureBufferIsReadThroughATextureObject) {
  constexpr int n = 1000;
  std::vector<float> x(4 * n);
  for (int i = 0; i < 4 * n; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 97) * 0.5f;
  LaunchPlan p;
  p.buffers.push_back({"x", ParamRole::In, ElementType::F32x4, n, bytes_of(x), true});
  p.buffers.push_back({"y", ParamRole::Out, ElementType::F32, n, {}});
  p.params = {{true, 0}, {true, 1}, {false, 0}, {false, 1}};
  p.block = {128, 1, 1};
  p.grid = {8, 1, 1};
  const LoadedKernel k = kernel("texture_scale");
  for (const bool twice : {false, true}) {
    p.scalars = {scalar("n", n), ScalarArg{"twice", {std::byte{twice ? std::uint8_t{1} : std::uint8_t{0}}}}};
    ExpectedOutput e{"y", std::vector<double>(n), std::nullopt, {}};
    for (int i = 0; i < n; ++i)
      e.values[static_cast<std::size_t>(i)] = (twice ? 2.0 : 1.0) * (x[4 * static_cast<std::size_t>(i)] +
                                                                      x[4 * static_cast<std::size_t>(i) + 3]);
    const CheckReport r = runner_->run_checked(k, p, {e}, Tolerance{0, 0});
    EXPECT_TRUE(r.ok()) << twice << ": " << r.message;
  }
  // An int buffer through a texture of signed words; a double one has none.
  LaunchPlan bad = p;
  bad.buffers[0] = {"x", ParamRole::In, ElementType::F64, n, std::vector<std::byte>(8 * n), true};
  EXPECT_THROW(runner_->run_checked(k, bad, {}, Tolerance{}), std::exception);
}

// A texture over a CUDA array: the GPU's samplers give the values
// test::texture_samples() works out, as the CPU emulator does
// (texture_array_test.cpp), for point and linear filtering, clamp and
// border addressing, plain and normalised coordinates.
TEST_F(GpuRunnerCheck, AnArrayTextureSamplesAsItsSamplerSays) {
  const std::vector<float> texels = gi::test::sample_volume_texels();
  const LoadedKernel k = kernel("sample_volume");
  for (const gi::test::TextureSample& s : gi::test::texture_samples()) {
    LaunchPlan p;
    p.entry = "sample_volume";
    p.buffers.push_back({"volume", ParamRole::In, ElementType::F32, texels.size(), bytes_of(texels), true,
                         TextureArray{3, {4, 3, 2}, s.filter, s.address, s.normalized}});
    p.buffers.push_back({"points", ParamRole::In, ElementType::F32, 3, bytes_of(std::vector<float>{s.x, s.y, s.z})});
    p.buffers.push_back({"out", ParamRole::Out, ElementType::F32, 1, {}});
    p.scalars = {scalar("n", 1)};
    p.params = {{true, 0}, {true, 1}, {true, 2}, {false, 0}};
    p.block = {32, 1, 1};
    p.grid = {1, 1, 1};
    const ExpectedOutput e{"out", {s.want}, std::nullopt, {}};
    const CheckReport r = runner_->run_checked(k, p, {e}, Tolerance{1e-4, 0});
    EXPECT_TRUE(r.ok()) << "at (" << s.x << ", " << s.y << ", " << s.z << "): " << r.message;
  }
}

TEST_F(GpuRunnerCheck, WrittenElementsMustBeExactlyTheSeeds) {
  const LaunchPlan p = scale_plan();
  std::vector<ExpectedOutput> evens = scale_reference(p);
  evens[0].written_elements.emplace();
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(kN); i += 2) evens[0].written_elements->push_back(i);
  const CheckReport ok = runner_->run_checked(kernel("scale_evens"), p, evens, Tolerance{});
  EXPECT_TRUE(ok.ok()) << ok.message;
  const CheckReport all = runner_->run_checked(kernel("scale"), p, evens, Tolerance{});
  EXPECT_EQ(all.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(all.message, "element 1: written, but the reference leaves it untouched"))
      << all.message;
}

// The device check (default) and the host check apply the same rules: same
// status, same first failure, same counts, maxima and digest.
TEST_F(GpuRunnerCheck, DeviceCheckAgreesWithTheHostCheck) {
  const LaunchPlan p = scale_plan();
  std::vector<ExpectedOutput> evens = scale_reference(p);
  evens[0].written_elements.emplace();
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(kN); i += 2) evens[0].written_elements->push_back(i);
  const std::vector<ExpectedOutput> all = scale_reference(p);
  const std::pair<const char*, const std::vector<ExpectedOutput>*> cases[] = {
      {"scale", &all}, {"scale_wrong", &all}, {"scale_skips_one", &all}, {"scale_evens", &evens}, {"scale", &evens}};
  for (const auto& [entry, reference] : cases) {
    const LoadedKernel k = kernel(entry);
    runner_->set_check_on_host(true);
    const CheckReport host = runner_->run_checked(k, p, *reference, Tolerance{});
    runner_->set_check_on_host(false);
    const CheckReport device = runner_->run_checked(k, p, *reference, Tolerance{});
    SCOPED_TRACE(std::string(entry) + (reference == &evens ? " (evens written)" : ""));
    EXPECT_EQ(device.status, host.status);
    EXPECT_EQ(device.message, host.message);
    EXPECT_EQ(device.values_checked, host.values_checked);
    EXPECT_EQ(device.max_abs_error, host.max_abs_error);
    EXPECT_EQ(device.max_rel_error, host.max_rel_error);
    EXPECT_NEAR(device.rms_error, host.rms_error, 1e-12 + 1e-9 * host.rms_error);
    EXPECT_EQ(device.output_digest, host.output_digest);
    EXPECT_EQ(device.output_digest.size(), 16u);
  }
  // Infinities in the input and the reference: the same infinity passes,
  // another value against one fails, on both sides alike.
  LaunchPlan inf = scale_plan();
  const float infinities[2] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  std::memcpy(inf.buffers[0].initial.data() + 4 * 10, infinities, 8);
  const std::vector<ExpectedOutput> same_infinities = scale_reference(inf);
  // (Another vector: the device keeps a reference by its address and sampled values.)
  const std::vector<ExpectedOutput> finite_against_infinity = [&] {
    std::vector<ExpectedOutput> r = scale_reference(inf);
    r[0].values[12] = std::numeric_limits<double>::infinity();
    return r;
  }();
  for (const std::vector<ExpectedOutput>* reference : {&same_infinities, &finite_against_infinity}) {
    runner_->set_check_on_host(true);
    const CheckReport host = runner_->run_checked(kernel("scale"), inf, *reference, Tolerance{1e-5, 1e-4});
    runner_->set_check_on_host(false);
    const CheckReport device = runner_->run_checked(kernel("scale"), inf, *reference, Tolerance{1e-5, 1e-4});
    SCOPED_TRACE(reference == &same_infinities ? "the same infinities" : "a finite value against an infinity");
    EXPECT_EQ(host.ok(), reference == &same_infinities) << host.message;
    EXPECT_EQ(device.status, host.status);
    EXPECT_EQ(device.message, host.message);
    EXPECT_EQ(device.max_abs_error, host.max_abs_error);
  }
  // A different output gives a different digest.
  const CheckReport right = runner_->run_checked(kernel("scale"), p, all, Tolerance{});
  const CheckReport wrong = runner_->run_checked(kernel("scale_wrong"), p, all, Tolerance{});
  EXPECT_NE(right.output_digest, wrong.output_digest);
}

// A variant's write far out of bounds can land in the reference the device
// check keeps (an H100 search saw every later check of a slot fail, the
// unmodified seed's too). A failure that the host's reference does not
// confirm repairs the reference and is judged on the host instead.
TEST_F(GpuRunnerCheck, ADamagedDeviceReferenceIsRepairedAndNotBlamedOnTheKernel) {
  const LaunchPlan p = scale_plan();
  const std::vector<ExpectedOutput> reference = scale_reference(p);
  const LoadedKernel right = kernel("scale");
  const std::string slot = "damaged";
  ASSERT_EQ(runner_->run_checked(right, p, reference, Tolerance{}, slot).status, RunStatus::Ok);
  const CUdeviceptr values = runner_->device_reference(slot, "out");
  ASSERT_NE(values, 0u);
  // Doubles 100..199 become 0.0, as a stray write of zeros would leave them.
  ASSERT_EQ(cudaMemset(reinterpret_cast<void*>(values + 100 * sizeof(double)), 0, 100 * sizeof(double)),
            cudaSuccess);
  const std::size_t repairs = runner_->reference_repairs();
  const CheckReport r = runner_->run_checked(right, p, reference, Tolerance{}, slot);
  EXPECT_EQ(r.status, RunStatus::Ok) << r.message;
  EXPECT_EQ(r.values_checked, static_cast<std::size_t>(kN));
  EXPECT_EQ(runner_->reference_repairs(), repairs + 1);
  // The repaired reference is on the device again: the next check finds
  // nothing to repair, and a wrong kernel still fails where it is wrong.
  EXPECT_EQ(runner_->run_checked(right, p, reference, Tolerance{}, slot).status, RunStatus::Ok);
  const CheckReport wrong = runner_->run_checked(kernel("scale_wrong"), p, reference, Tolerance{}, slot);
  EXPECT_EQ(wrong.status, RunStatus::WrongOutput);
  EXPECT_TRUE(contains(wrong.message, "buffer 'out' element 777: got")) << wrong.message;
  EXPECT_EQ(runner_->reference_repairs(), repairs + 1);
  runner_->release(slot);
}

TEST_F(GpuRunnerCheck, ClockTicksOfAnInstrumentedKernel) {
  Compiler compiler(std::nullopt);
  CompileRequest request;
  request.source = instrument_clock_ticks(kKernels, "scale", "planted.cu");
  request.file_name = "planted.cu";
  request.arch = runner_->arch();
  const CompileResult compiled = compiler.compile(request);
  ASSERT_TRUE(compiled.ok) << compiled.error << "\n" << compiled.log;
  LoadResult loaded = runner_->load(compiled.cubin, "scale");
  ASSERT_TRUE(loaded.ok()) << loaded.message;
  const LaunchPlan p = scale_plan();
  TimingConfig config;
  config.min_samples = 5;
  const ClockTicks t = runner_->clock_ticks(*loaded.kernel, p, config);
  std::cout << "[ clock    ] " << t.median_ticks << " ticks over " << p.grid[0] << " blocks, span "
            << t.median_span_ms << " ms, SM clock " << t.sm_mhz << " MHz\n";
  ASSERT_EQ(t.samples.size(), 5u);
  EXPECT_GT(t.median_ticks, static_cast<double>(p.grid[0]));  // every block takes some ticks
  EXPECT_GT(t.median_span_ms, 0.0);
  EXPECT_LT(t.median_span_ms, 100.0);
  EXPECT_GT(t.sm_mhz, 300.0);
  EXPECT_LT(t.sm_mhz, 4000.0);
  // The instrumented kernel still computes the right answer... through the
  // plain kernel's check: the plain one is what is checked and shipped.
  EXPECT_TRUE(runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{}).ok());
}

TEST_F(GpuRunnerCheck, BadImageOrEntryIsLoadError) {
  const std::vector<char> junk(1000, 'x');
  LoadResult r = runner_->load(junk, "scale");
  EXPECT_EQ(r.status, RunStatus::LoadError);
  EXPECT_TRUE(contains(r.message, "cuModule")) << r.message;
  r = runner_->load(*cubin_, "no_such_kernel");
  EXPECT_EQ(r.status, RunStatus::LoadError);
  // The kernels the module has are named (fitness/gpu/entry_symbol.hpp).
  EXPECT_TRUE(contains(r.message, "cuModuleGetFunction(no_such_kernel): no kernel named 'no_such_kernel'")) << r.message;
  EXPECT_TRUE(contains(r.message, "it has: scale,")) << r.message;
}

TEST_F(GpuRunnerCheck, BadLaunchIsLaunchErrorAndTheRunnerStaysUsable) {
  LaunchPlan p = scale_plan();
  p.block = {2048, 1, 1};  // above the limit of 1024 threads
  CheckReport r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::LaunchError);
  EXPECT_TRUE(contains(r.message, "cuLaunchKernel")) << r.message;

  p = scale_plan();
  p.params.pop_back();  // the kernel takes 4 parameters
  r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::LaunchError);
  EXPECT_TRUE(contains(r.message, "parameters")) << r.message;

  p = scale_plan();
  p.scalars[1] = scalar("n", static_cast<long long>(kN));  // 8 bytes for an int
  r = runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{});
  EXPECT_EQ(r.status, RunStatus::LaunchError);
  EXPECT_TRUE(contains(r.message, "scalar 'n' is 8")) << r.message;

  EXPECT_TRUE(runner_->usable());
  p = scale_plan();
  EXPECT_TRUE(runner_->run_checked(kernel("scale"), p, scale_reference(p), Tolerance{}).ok());
}

// ---- timing ---------------------------------------------------------------------

class TimingGpu : public GpuFixture {
 protected:
  // 256 MB in, 256 MB out: memory-bound.
  static LaunchPlan copy_plan() {
    const int n = 16 << 20;  // float4 elements
    std::vector<float> in(4 * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 1000);
    LaunchPlan p;
    p.entry = "copy4";
    p.buffers.push_back({"in", ParamRole::In, ElementType::F32x4, static_cast<std::size_t>(n), bytes_of(in)});
    p.buffers.push_back({"out", ParamRole::Out, ElementType::F32x4, static_cast<std::size_t>(n), {}});
    p.scalars.push_back(scalar("n", n));
    p.params = {{true, 0}, {true, 1}, {false, 0}};
    p.block = {256, 1, 1};
    p.grid = {static_cast<unsigned>(n / 256), 1, 1};
    p.min_bytes_moved = 2.0 * 16.0 * n;
    return p;
  }
};

TEST_F(TimingGpu, CopyOf256MBRunsAtAPlausibleBandwidth) {
  const LaunchPlan p = copy_plan();
  TimingConfig config;
  const TimingResult t = runner_->time(kernel("copy4"), p, config);
  const double tb_per_s = p.min_bytes_moved / (t.median_ms * 1e-3) / 1e12;
  std::cout << "[ timing   ] " << runner_->device_name() << ": copy 2x256 MB median " << t.median_ms
            << " ms (" << tb_per_s << " TB/s), spread " << 100 * t.relative_spread << "%, min "
            << t.min_ms << ", max " << t.max_ms << ", " << t.samples_ms.size() << " samples"
            << (t.converged ? ", converged" : "") << "\n";
  RecordProperty("copy_tb_per_s", std::to_string(tb_per_s));
  EXPECT_GE(static_cast<int>(t.samples_ms.size()), config.min_samples);
  EXPECT_GT(tb_per_s, 1.0);
  EXPECT_LT(tb_per_s, 5.0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
  EXPECT_LT(t.relative_spread, 0.05);
}

TEST_F(TimingGpu, ShortKernelIsTimedBehindTheSpinKernel) {
  LaunchPlan p = scale_plan();
  p.scalars[1] = scalar("n", 1024);
  p.grid = {4, 1, 1};
  TimingConfig config;
  const TimingResult t = runner_->time(kernel("scale"), p, config);
  std::cout << "[ timing   ] tiny kernel (1024 threads) median " << 1000 * t.median_ms
            << " us, spread " << 100 * t.relative_spread << "%, " << t.samples_ms.size()
            << " samples\n";
  EXPECT_GE(static_cast<int>(t.samples_ms.size()), config.min_samples);
  // Launch latency (several us) would show without the spin kernel.
  EXPECT_LT(t.median_ms, 0.02);
  EXPECT_GT(t.median_ms, 0.0);
}

TEST_F(TimingGpu, InterleavedComparisonSeesHalfTheWorkAndNoDifferenceForTheSame) {
  const LaunchPlan p = copy_plan();
  const LoadedKernel full = kernel("copy4");
  const LoadedKernel again = kernel("copy4");
  const LoadedKernel half = kernel("copy4_half");
  TimingConfig config;
  const std::vector<PairedSample> same = runner_->time_interleaved(full, again, p, 20, config);
  const std::vector<PairedSample> faster = runner_->time_interleaved(full, half, p, 20, config);
  ASSERT_EQ(same.size(), 20u);
  std::vector<double> a, b;
  for (const auto& s : same) {
    a.push_back(s.a_ms);
    b.push_back(s.b_ms);
  }
  std::cout << "[ timing   ] same kernel A/B ratio " << speedup(a, b) << ", ci_low "
            << speedup_ci_low(same) << "; half copy ratio ";
  a.clear();
  b.clear();
  for (const auto& s : faster) {
    a.push_back(s.a_ms);
    b.push_back(s.b_ms);
  }
  std::cout << speedup(a, b) << ", ci_low " << speedup_ci_low(faster) << "\n";
  EXPECT_LT(speedup_ci_low(same), 1.03);
  // Half the bytes, but every block is still launched: about 1.5x on an H200.
  EXPECT_GT(speedup_ci_low(faster), 1.3);
  EXPECT_LT(speedup_ci_low(faster), speedup(a, b));
}

// ---- isolation through the worker ----------------------------------------------

class GpuRunnerWorker : public GpuFixture {
 protected:
  void SetUp() override {
    GpuFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("gi-worker-" + std::to_string(rd()));
    fs::create_directories(dir_);
    const LaunchPlan p = scale_plan();
    save_plan(dir_ / "scale.plan", p, scale_reference(p), Tolerance{});
    std::ofstream(dir_ / "planted.cubin", std::ios::binary)
        .write(cubin_->data(), static_cast<std::streamsize>(cubin_->size()));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  EvalRequest request(const std::string& entry) const {
    EvalRequest r;
    r.cubin_file = dir_ / "planted.cubin";
    r.entry = entry;
    r.kernel_timeout = milliseconds(2000);
    r.timing.budget_seconds = 0.5;
    return r;
  }
  fs::path dir_;
};

TEST_F(GpuRunnerWorker, FaultsKillTheWorkerWhichRestartsAndGoesOn) {
  WorkerProcess w(test_worker_path(), {"0"});
  WorkerReply r = w.load_plan(dir_ / "scale.plan");
  ASSERT_FALSE(r.request_failed) << r.message;
  ASSERT_EQ(r.status, RunStatus::Ok) << r.message;

  r = w.eval(request("scale"));
  EXPECT_EQ(r.status, RunStatus::Ok) << r.message;
  ASSERT_TRUE(r.timing().has_value()) << r.body.dump();
  EXPECT_GE(r.timing()->samples_ms.size(), 10u);
  EXPECT_GT(r.timing()->median_ms, 0);
  EXPECT_EQ(r.check_report().values_checked, static_cast<std::size_t>(kN));

  r = w.eval(request("scale_wrong"));
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_FALSE(r.worker_died);
  EXPECT_FALSE(r.timing().has_value());

  struct Fault {
    const char* entry;
    RunStatus status;
  };
  const Fault faults[] = {{"scale_forever", RunStatus::Timeout},
                          {"scale_far_away", RunStatus::IllegalAddress},
                          {"scale_trap", RunStatus::Trap}};
  int restarts = 0;
  for (const Fault& f : faults) {
    const auto start = std::chrono::steady_clock::now();
    r = w.eval(request(f.entry));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ worker   ] " << f.entry << ": " << to_string(r.status) << " in " << seconds
              << " s: " << r.message << "\n";
    EXPECT_EQ(r.status, f.status) << f.entry << ": " << r.message;
    EXPECT_TRUE(r.worker_died) << f.entry;
    EXPECT_FALSE(w.running());
    // The next evaluation restarts the worker, reloads the plan and goes on.
    r = w.eval(request("scale"));
    EXPECT_EQ(r.status, RunStatus::Ok) << "after " << f.entry << ": " << r.message;
    EXPECT_EQ(w.restarts(), ++restarts);
  }
  w.stop();
}

TEST_F(GpuRunnerWorker, LoadErrorIsReportedWithoutLosingTheWorker) {
  WorkerProcess w(test_worker_path(), {"0"});
  ASSERT_EQ(w.load_plan(dir_ / "scale.plan").status, RunStatus::Ok);
  const WorkerReply r = w.eval(request("missing_entry"));
  EXPECT_EQ(r.status, RunStatus::LoadError);
  EXPECT_FALSE(r.worker_died);
  EXPECT_TRUE(w.running());
}

}  // namespace

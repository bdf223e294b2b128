// The CPU emulator (fitness/emulation/cpu_emulator.hpp) on small hand-written kernels:
// shared memory and barriers, warp collectives, early exits, atomics,
// dynamic shared memory, and the failures a GPU check reports (guards,
// inputs, outputs, illegal addresses, deadlocks, endless loops). No GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/emulation/cpu_emulator.hpp"
#include "fitness/emulation/emulated_module.hpp"
#include "fitness/emulation/emulation_source.hpp"
#include "grammar/entry_namespace.hpp"
#include "tests/plan_helpers.hpp"

namespace gi::fitness {
namespace {

using test::bytes_of;
using test::scalar;

// One emulator for the file; compiled kernels are cached on disk across runs.
const CpuEmulator& emulator() {
  static const CpuEmulator e([] {
    EmulatorOptions o;
    o.cache_dir = std::filesystem::temp_directory_path() / "gi-emulator-test-cache";
    o.timeout = std::chrono::milliseconds(20000);
    return o;
  }());
  return e;
}

EmulatedKernel load(const std::string& source, const std::string& entry) {
  EmulatedKernel k = emulator().load(source, entry, "test.cu");
  EXPECT_TRUE(k.ok()) << k.error;
  return k;
}

BufferArg in_buffer(const std::string& name, const std::vector<float>& values) {
  return BufferArg{name, ParamRole::In, ElementType::F32, values.size(), bytes_of(values)};
}
BufferArg in_ints(const std::string& name, const std::vector<int>& values) {
  return BufferArg{name, ParamRole::In, ElementType::I32, values.size(), bytes_of(values)};
}
BufferArg out_buffer(const std::string& name, std::size_t count, ElementType type = ElementType::F32) {
  return BufferArg{name, ParamRole::Out, type, count, {}};
}

template <typename T>
std::vector<T> values_of(const std::vector<std::byte>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

ExpectedOutput expect(const std::string& buffer, std::vector<double> values) {
  ExpectedOutput e;
  e.buffer = buffer;
  e.values = std::move(values);
  return e;
}

// Skips where there is no C++ compiler to build emulated kernels with (a
// GPU host the binaries were carried to).
class EmulatedKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (emulation::find_emulator_compiler().empty()) GTEST_SKIP() << "no C++ compiler for the CPU emulator";
  }
};

constexpr const char* kBlockSum = R"(
extern "C" __global__ void block_sum(const float* in, int n, float* out) {
    __shared__ float partial[128];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (t < half) partial[t] += partial[t + half];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
)";

LaunchPlan block_sum_plan(const std::vector<float>& in, unsigned blocks) {
  LaunchPlan p;
  p.entry = "block_sum";
  p.buffers = {in_buffer("in", in), out_buffer("out", blocks)};
  p.scalars = {scalar<int>("n", static_cast<int>(in.size()))};
  p.params = {{true, 0}, {false, 0}, {true, 1}};
  p.grid = {blocks, 1, 1};
  p.block = {128, 1, 1};
  return p;
}

// __constant__ variables as a host sets them before a launch: each launch
// gets its plan's values, and a constant the module lacks is a clear error.
constexpr const char* kScaleByConstants = R"(
__device__ __constant__ int c_Count;
__constant__ float c_Weight;
extern "C" __global__ void scale(float* v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < c_Count) v[i] *= c_Weight;
}
)";

TEST_F(EmulatedKernels, ConstantsAreSetBeforeEachLaunch) {
  const EmulatedKernel k = load(kScaleByConstants, "scale");
  std::vector<float> in(100, 2.0f);
  LaunchPlan p;
  p.entry = "scale";
  p.buffers = {BufferArg{"v", ParamRole::InOut, ElementType::F32, in.size(), bytes_of(in)}};
  p.params = {{true, 0}};
  p.grid = {1, 1, 1};
  p.block = {128, 1, 1};
  for (const auto& [count, weight] : {std::pair{60, 3.0f}, std::pair{90, 0.5f}}) {
    p.constants = {scalar<int>("c_Count", count), scalar<float>("c_Weight", weight)};
    std::vector<double> want(in.size(), 2.0);
    for (int i = 0; i < count; ++i) want[static_cast<std::size_t>(i)] = 2.0 * weight;
    const CheckReport r = emulator().run_checked(k, p, {expect("v", want)}, Tolerance{0, 0});
    EXPECT_TRUE(r.ok()) << count << ": " << r.message;
  }
  p.constants = {scalar<int>("c_Missing", 1)};
  const CheckReport missing = emulator().run_checked(k, p, {expect("v", std::vector<double>(in.size(), 2.0))}, Tolerance{0, 0});
  EXPECT_EQ(missing.status, RunStatus::LaunchError);
  EXPECT_NE(missing.message.find("'c_Missing'"), std::string::npos) << missing.message;
}

TEST_F(EmulatedKernels, SharedMemoryTreeReductionWithSyncthreads) {
  const EmulatedKernel k = load(kBlockSum, "block_sum");
  std::vector<float> in(300);
  std::iota(in.begin(), in.end(), 1.0f);
  const LaunchPlan plan = block_sum_plan(in, 3);
  std::vector<double> sums(3, 0);
  for (std::size_t i = 0; i < in.size(); ++i) sums[i / 128] += in[i];
  const CheckReport r = emulator().run_checked(k, plan, {expect("out", sums)}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.values_checked, 3u);
  EXPECT_EQ(r.output_digest.size(), 16u);
  // Deterministic: the same digest again.
  EXPECT_EQ(emulator().run_checked(k, plan, {expect("out", sums)}, Tolerance{0, 0}).output_digest, r.output_digest);
}

// NiftyReg's kernels live in `namespace NiftyReg::Cuda { namespace { ... } }`:
// the spec names the kernel as the source does, and the launcher, at file
// scope after the source, calls it through the named namespaces.
TEST_F(EmulatedKernels, AKernelInsideNamespacesRunsByItsPlainName) {
  std::string source = kBlockSum;
  source.replace(source.find("extern \"C\" "), 11, "");
  source = "namespace outer::inner {\nnamespace {\n" + source + "}\n}  // namespace outer::inner\n";
  const EmulatedKernel k = load(source, "block_sum");
  std::vector<float> in(300, 1.0f);
  const CheckReport r =
      emulator().run_checked(k, block_sum_plan(in, 3), {expect("out", {128, 128, 44})}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(grammar::entry_qualified_from_file_scope(source, "block_sum"), "outer::inner::block_sum");
  EXPECT_EQ(grammar::entry_qualified_from_file_scope(source, "outer::inner::block_sum"), "outer::inner::block_sum");
  EXPECT_EQ(grammar::entry_qualified_from_file_scope(kBlockSum, "block_sum"), "block_sum");
}

TEST_F(EmulatedKernels, WarpShufflesBallotVotesMatchAndReduce) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void warp_ops(int* out) {
    int lane = threadIdx.x & 31;
    int* o = out + threadIdx.x * 10;
    int v = lane;
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    o[0] = __shfl_sync(0xffffffffu, v, 0);                       // 496 everywhere
    o[1] = (int)__ballot_sync(0xffffffffu, lane & 1);            // 0xAAAAAAAA
    int x = lane;
    for (int m = 1; m < 32; m <<= 1) x += __shfl_xor_sync(0xffffffffu, x, m);
    o[2] = x;                                                   // 496 everywhere
    int up = __shfl_up_sync(0xffffffffu, lane, 1);
    o[3] = up;                                                  // lane - 1, lane 0 its own
    o[4] = (int)__match_any_sync(0xffffffffu, lane / 8);        // 0xFF << (lane / 8 * 8)
    o[5] = __reduce_add_sync(0xffffffffu, lane);                // 496
    o[6] = __reduce_min_sync(0xffffffffu, 10 - lane) * 100 + __reduce_max_sync(0xffffffffu, (unsigned)lane);
    o[7] = __all_sync(0xffffffffu, lane < 32) * 10 + __any_sync(0xffffffffu, lane == 5);
    o[8] = __shfl_sync(0xffffffffu, lane, lane + 1, 8);         // within groups of 8
    o[9] = (int)__activemask();
}
)",
                                "warp_ops");
  LaunchPlan p;
  p.entry = "warp_ops";
  p.buffers = {out_buffer("out", 64 * 10, ElementType::I32)};
  p.params = {{true, 0}};
  p.block = {64, 1, 1};
  const EmulatedRun run = emulator().run(k, p);
  ASSERT_EQ(run.status, RunStatus::Ok) << run.message;
  const std::vector<int> o = values_of<int>(run.buffers[0]);
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    const int* r = &o[static_cast<std::size_t>(t) * 10];
    EXPECT_EQ(r[0], 496) << t;
    EXPECT_EQ(static_cast<unsigned>(r[1]), 0xAAAAAAAAu) << t;
    EXPECT_EQ(r[2], 496) << t;
    EXPECT_EQ(r[3], lane == 0 ? 0 : lane - 1) << t;
    EXPECT_EQ(static_cast<unsigned>(r[4]), 0xFFu << (lane / 8 * 8)) << t;
    EXPECT_EQ(r[5], 496) << t;
    EXPECT_EQ(r[6], (10 - 31) * 100 + 31) << t;
    EXPECT_EQ(r[7], 11) << t;
    EXPECT_EQ(r[8], (lane & ~7) + ((lane + 1) & 7)) << t;
    EXPECT_EQ(static_cast<unsigned>(r[9]), 0xFFFFFFFFu) << t << ": every lane reaches it together";
  }
}

// Cooperative groups' reduce as gi's donors write it: over the coalesced
// threads, here the odd lanes of each warp, which the branch leaves.
constexpr const char* kCoalescedReduce = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
extern "C" __global__ void odd_lane_sums(const int* in, int* sums, int* maxima) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 2 == 1) {
        int s = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), in[i], cooperative_groups::plus<int>());
        int m = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), in[i], cooperative_groups::greater<int>());
        if (threadIdx.x % 32 == 1) { sums[i / 32] = s; maxima[i / 32] = m; }
    }
}
)";

TEST_F(EmulatedKernels, CooperativeGroupsReduceOverTheCoalescedThreads) {
  const EmulatedKernel k = load(kCoalescedReduce, "odd_lane_sums");
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[static_cast<std::size_t>(i)] = (i * 7) % 23;
  LaunchPlan p;
  p.entry = "odd_lane_sums";
  p.buffers = {in_ints("in", in), out_buffer("sums", 2, ElementType::I32), out_buffer("maxima", 2, ElementType::I32)};
  p.params = {{true, 0}, {true, 1}, {true, 2}};
  p.grid = {1, 1, 1};
  p.block = {64, 1, 1};
  std::vector<double> sums(2, 0), maxima(2, -1);
  for (int i = 1; i < 64; i += 2) {
    sums[static_cast<std::size_t>(i / 32)] += in[static_cast<std::size_t>(i)];
    maxima[static_cast<std::size_t>(i / 32)] = std::max(maxima[static_cast<std::size_t>(i / 32)], double(in[static_cast<std::size_t>(i)]));
  }
  const CheckReport r = emulator().run_checked(k, p, {expect("sums", sums), expect("maxima", maxima)}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(EmulatedKernels, ActiveMaskIsTheLanesThatReachTheSameCall) {
  // Divergent branches: each side's lanes see their own side (the GPU's
  // converged lanes at that instruction); lanes of a partial last warp only
  // themselves.
  const EmulatedKernel k = load(R"(
extern "C" __global__ void active(unsigned* out) {
    int lane = threadIdx.x % 32;
    unsigned m;
    if (lane < 10) {
        m = __activemask();
    } else {
        m = __activemask();
    }
    out[threadIdx.x] = m;
}
)",
                                "active");
  LaunchPlan p;
  p.entry = "active";
  p.buffers = {out_buffer("out", 48, ElementType::U32)};
  p.params = {{true, 0}};
  p.block = {48, 1, 1};
  const EmulatedRun run = emulator().run(k, p);
  ASSERT_EQ(run.status, RunStatus::Ok) << run.message;
  const std::vector<unsigned> o = values_of<unsigned>(run.buffers[0]);
  for (unsigned t = 0; t < 48; ++t) {
    const unsigned lane = t % 32, warp_lanes = t < 32 ? 0xFFFFFFFFu : 0xFFFFu;
    EXPECT_EQ(o[t], (lane < 10 ? 0x3FFu : ~0x3FFu) & warp_lanes) << t;
  }
}

TEST_F(EmulatedKernels, ACollectiveWhoseMaskNamesAnExitedLaneIsAnError) {
  // The early return before a full-mask shuffle, both ways round: the lanes
  // that return run before the shuffle is called, or after their warp's
  // other lanes already wait in it.
  for (const char* guard : {"if (lane < 16) return;", "if (lane >= 16) return;"}) {
    SCOPED_TRACE(guard);
    const EmulatedKernel k = load(std::string(R"(
extern "C" __global__ void early(int* out) {
    int lane = threadIdx.x % 32;
    )") + guard + R"(
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, lane, 1);
}
)",
                                  "early");
    LaunchPlan p;
    p.entry = "early";
    p.buffers = {out_buffer("out", 32, ElementType::I32)};
    p.params = {{true, 0}};
    p.block = {32, 1, 1};
    const EmulatedRun run = emulator().run(k, p);
    EXPECT_NE(run.status, RunStatus::Ok);
    EXPECT_NE(run.message.find("exited"), std::string::npos) << run.message;
    EXPECT_NE(run.message.find("__shfl_down_sync"), std::string::npos) << run.message;
  }
}

TEST_F(EmulatedKernels, DivergentHalvesOfAWarpSyncSeparatelyThenTogether) {
  // Lanes 0-15 wait in a full-mask __syncwarp while lanes 16-31 first
  // shuffle among themselves (independent thread scheduling, sm_70+).
  const EmulatedKernel k = load(R"(
extern "C" __global__ void halves(int* out) {
    int lane = threadIdx.x;
    int v = lane;
    if (lane >= 16) v = __shfl_down_sync(0xffff0000u, v, 1, 16);
    __syncwarp();
    out[lane] = v;
}
)",
                                "halves");
  LaunchPlan p;
  p.entry = "halves";
  p.buffers = {out_buffer("out", 32, ElementType::I32)};
  p.params = {{true, 0}};
  p.block = {32, 1, 1};
  const EmulatedRun run = emulator().run(k, p);
  ASSERT_EQ(run.status, RunStatus::Ok) << run.message;
  const std::vector<int> o = values_of<int>(run.buffers[0]);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(o[static_cast<std::size_t>(lane)], lane < 16 || lane == 31 ? lane : lane + 1) << lane;
}

TEST_F(EmulatedKernels, ThreadsThatReturnEarlyCountAsArrivedAtLaterBarriers) {
  // The last block is partly beyond n: its threads past the end return
  // before the barriers the others still pass, and a warp collective over
  // __activemask() takes the lanes that are left (a full mask would name
  // exited lanes: ACollectiveWhoseMaskNamesAnExitedLaneIsAnError).
  const EmulatedKernel k = load(R"(
extern "C" __global__ void early_exit(const float* in, int n, float* out) {
    __shared__ float tile[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i >= n) return;
    tile[t] = in[i];
    __syncthreads();
    float neighbour = (t + 1 < blockDim.x && i + 1 < n) ? tile[t + 1] : 0.0f;
    __syncthreads();
    float lanes = __shfl_sync(__activemask(), 1.0f, 0);  // lane 0 of every warp is still there
    out[i] = tile[t] + neighbour + 0.0f * lanes;
}
)",
                                "early_exit");
  std::vector<float> in(100);
  std::iota(in.begin(), in.end(), 0.0f);
  LaunchPlan p;
  p.entry = "early_exit";
  p.buffers = {in_buffer("in", in), out_buffer("out", in.size())};
  p.scalars = {scalar<int>("n", 100)};
  p.params = {{true, 0}, {false, 0}, {true, 1}};
  p.grid = {2, 1, 1};
  p.block = {64, 1, 1};
  std::vector<double> want(in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    want[i] = in[i] + ((i % 64) + 1 < 64 && i + 1 < in.size() ? in[i + 1] : 0.0f);
  const CheckReport r = emulator().run_checked(k, p, {expect("out", want)}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(EmulatedKernels, FloatAndIntegerAtomics) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void atomics(const int* values, int n, int* histogram, float* sum, int* extremes,
                                   unsigned long long* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&histogram[values[i] % 4], 1);
        atomicAdd(sum, 0.5f);
        atomicMax(&extremes[0], values[i]);
        atomicMin(&extremes[1], values[i]);
        atomicAdd(count, 1ull);
        int old = extremes[2];
        int assumed;
        do {
            assumed = old;
            old = atomicCAS(&extremes[2], assumed, assumed + values[i]);
        } while (old != assumed);
    }
}
)",
                                "atomics");
  std::vector<int> values(1000);
  for (int i = 0; i < 1000; ++i) values[static_cast<std::size_t>(i)] = (i * 37) % 1001;
  LaunchPlan p;
  p.entry = "atomics";
  p.buffers = {in_ints("values", values), BufferArg{"histogram", ParamRole::InOut, ElementType::I32, 4,
                                                    bytes_of(std::vector<int>(4, 0))},
               BufferArg{"sum", ParamRole::InOut, ElementType::F32, 1, bytes_of(std::vector<float>{0.0f})},
               BufferArg{"extremes", ParamRole::InOut, ElementType::I32, 3,
                         bytes_of(std::vector<int>{-1, 1 << 30, 0})},
               BufferArg{"count", ParamRole::InOut, ElementType::U32, 2, bytes_of(std::vector<unsigned>{0, 0})}};
  p.scalars = {scalar<int>("n", 1000)};
  p.params = {{true, 0}, {false, 0}, {true, 1}, {true, 2}, {true, 3}, {true, 4}};
  p.grid = {8, 1, 1};
  p.block = {128, 1, 1};
  std::vector<double> histogram(4, 0);
  double total = 0;
  for (int v : values) {
    histogram[static_cast<std::size_t>(v % 4)] += 1;
    total += v;
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const CheckReport r = emulator().run_checked(
      k, p,
      {expect("histogram", histogram), expect("sum", {500.0}), expect("extremes", {double(*hi), double(*lo), total}),
       expect("count", {1000.0, 0.0})},
      Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(EmulatedKernels, DynamicSharedMemory) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void reverse(const float* in, float* out) {
    extern __shared__ __align__(16) float buffer[];
    int t = threadIdx.x;
    buffer[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buffer[blockDim.x - 1 - t];
}
)",
                                "reverse");
  std::vector<float> in(256);
  std::iota(in.begin(), in.end(), 0.0f);
  LaunchPlan p;
  p.entry = "reverse";
  p.buffers = {in_buffer("in", in), out_buffer("out", in.size())};
  p.params = {{true, 0}, {true, 1}};
  p.grid = {2, 1, 1};
  p.block = {128, 1, 1};
  p.dynamic_shared_bytes = 128 * sizeof(float);
  std::vector<double> want(256);
  for (std::size_t i = 0; i < 256; ++i) want[i] = in[(i / 128) * 128 + 127 - i % 128];
  const CheckReport r = emulator().run_checked(k, p, {expect("out", want)}, Tolerance{0, 0});
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(EmulatedKernels, SharedMemoryStartsEveryBlockUndefined) {
  // Block 1 reads what only block 0 wrote: NaN here, garbage on a GPU.
  const EmulatedKernel k = load(R"(
extern "C" __global__ void stale(float* out) {
    __shared__ float s[32];
    if (blockIdx.x == 0) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];
}
)",
                                "stale");
  LaunchPlan p;
  p.entry = "stale";
  p.buffers = {out_buffer("out", 64)};
  p.params = {{true, 0}};
  p.grid = {2, 1, 1};
  p.block = {32, 1, 1};
  const CheckReport r = emulator().run_checked(k, p, {expect("out", std::vector<double>(64, 1.0))}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::WrongOutput);
  EXPECT_NE(r.message.find("element 32"), std::string::npos) << r.message;
  // __shared__ in a template as well as in a kernel: built without the NaN start.
  const EmulatedKernel both = load(R"(
template <class T> __device__ T first(T v) {
    __shared__ T slot[1];
    if (threadIdx.x == 0) slot[0] = v;
    __syncthreads();
    return slot[0];
}
extern "C" __global__ void broadcast(float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = first(s[31 - threadIdx.x]);
}
)",
                                   "broadcast");
  p.entry = "broadcast";
  p.grid = {1, 1, 1};
  p.buffers = {out_buffer("out", 32)};
  EXPECT_TRUE(emulator().run_checked(both, p, {expect("out", std::vector<double>(32, 31.0))}, Tolerance{}).ok());
}

TEST_F(EmulatedKernels, WriteIntoTheGuardRegionIsAGuardViolation) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void past_end(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 1.0f;
}
)",
                                "past_end");
  LaunchPlan p;
  p.entry = "past_end";
  p.buffers = {out_buffer("out", 100)};
  p.scalars = {scalar<int>("n", 100)};
  p.params = {{true, 0}, {false, 0}};
  p.block = {128, 1, 1};
  const CheckReport r = emulator().run_checked(k, p, {expect("out", std::vector<double>(100, 1.0))}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::GuardViolation);
  EXPECT_NE(r.message.find("guard region after buffer 'out' was written: byte 0 bytes after the end"),
            std::string::npos)
      << r.message;
}

TEST_F(EmulatedKernels, WrongOutputsUnwrittenElementsAndModifiedInputsAreReportedAsOnTheGpu) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void scale(float* in, float* out, int n, int mode) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (mode == 1 && i == 7) return;           // leaves out[7] unwritten
    out[i] = 2.0f * in[i] + (mode == 2 && i == 3 ? 1.0f : 0.0f);
    if (mode == 3 && i == 5) in[i] = 0.0f;     // writes an input
}
)",
                                "scale");
  std::vector<float> in(50);
  std::iota(in.begin(), in.end(), 1.0f);
  std::vector<double> want(50);
  for (std::size_t i = 0; i < 50; ++i) want[i] = 2.0 * in[i];
  auto plan = [&](int mode) {
    LaunchPlan p;
    p.entry = "scale";
    p.buffers = {in_buffer("in", in), out_buffer("out", 50)};
    p.scalars = {scalar<int>("n", 50), scalar<int>("mode", mode)};
    p.params = {{true, 0}, {true, 1}, {false, 0}, {false, 1}};
    p.block = {64, 1, 1};
    return p;
  };
  EXPECT_TRUE(emulator().run_checked(k, plan(0), {expect("out", want)}, Tolerance{}).ok());
  const CheckReport unwritten = emulator().run_checked(k, plan(1), {expect("out", want)}, Tolerance{});
  EXPECT_EQ(unwritten.status, RunStatus::WrongOutput);
  EXPECT_NE(unwritten.message.find("'out'"), std::string::npos) << unwritten.message;
  EXPECT_NE(unwritten.message.find("element 7"), std::string::npos) << unwritten.message;
  const CheckReport wrong = emulator().run_checked(k, plan(2), {expect("out", want)}, Tolerance{});
  EXPECT_EQ(wrong.status, RunStatus::WrongOutput);
  EXPECT_NE(wrong.message.find("element 3"), std::string::npos) << wrong.message;
  EXPECT_DOUBLE_EQ(wrong.max_abs_error, 1.0);
  const CheckReport modified = emulator().run_checked(k, plan(3), {expect("out", want)}, Tolerance{});
  EXPECT_EQ(modified.status, RunStatus::InputModified);
  EXPECT_NE(modified.message.find("input buffer 'in' was modified: element 5"), std::string::npos)
      << modified.message;
  EXPECT_THROW(emulator().run_checked(k, plan(0), {expect("in", want)}, Tolerance{}), std::invalid_argument);
}

TEST_F(EmulatedKernels, AFarAccessIsAnIllegalAddressAndTheEmulatorGoesOn) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void wild(const int* index, float* out) {
    out[threadIdx.x] = out[index[threadIdx.x]];
}
)",
                                "wild");
  LaunchPlan p;
  p.entry = "wild";
  p.buffers = {in_ints("index", {0, 1 << 30}), out_buffer("out", 2)};
  p.params = {{true, 0}, {true, 1}};
  p.block = {2, 1, 1};
  const CheckReport r = emulator().run_checked(k, p, {expect("out", {0.0, 0.0})}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::IllegalAddress);
  EXPECT_NE(r.message.find("thread (1,0,0) of block (0,0,0)"), std::string::npos) << r.message;
  // The next launch of the same kernel runs normally.
  const EmulatedRun ok = emulator().run(k, p);
  EXPECT_EQ(emulator().run(load(kBlockSum, "block_sum"), block_sum_plan(std::vector<float>(10, 1.0f), 1)).status,
            RunStatus::Ok);
  (void)ok;
}

TEST_F(EmulatedKernels, ADeadlockIsReportedNamingTheBlockAndWhatEachThreadWaitsIn) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void stuck(float* out) {
    if (threadIdx.x == 0) {
        __syncthreads();
    } else {
        __syncwarp();
    }
    out[threadIdx.x] = 1.0f;
}
)",
                                "stuck");
  LaunchPlan p;
  p.entry = "stuck";
  p.buffers = {out_buffer("out", 64)};
  p.params = {{true, 0}};
  p.block = {64, 1, 1};
  const CheckReport r = emulator().run_checked(k, p, {expect("out", std::vector<double>(64, 1.0))}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::Timeout);
  EXPECT_NE(r.message.find("deadlock in block (0,0,0)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("thread 0 waits in __syncthreads at line 4"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("threads 1-31 wait in __syncwarp(mask 0xffffffff) at line 6"), std::string::npos)
      << r.message;
}

TEST_F(EmulatedKernels, LanesOfOneMaskInDifferentCollectivesAreAMismatch) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void mismatch(int* out) {
    int v;
    if (threadIdx.x < 16) v = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
    else v = (int)__ballot_sync(0xffffffffu, 1);
    out[threadIdx.x] = v;
}
)",
                                "mismatch");
  LaunchPlan p;
  p.entry = "mismatch";
  p.buffers = {out_buffer("out", 32, ElementType::I32)};
  p.params = {{true, 0}};
  p.block = {32, 1, 1};
  const EmulatedRun r = emulator().run(k, p);
  EXPECT_EQ(r.status, RunStatus::LaunchError);
  EXPECT_NE(r.message.find("warp collective mismatch in block (0,0,0), warp 0"), std::string::npos) << r.message;
}

TEST_F(EmulatedKernels, AnEndlessLoopIsATimeout) {
  const EmulatedKernel k = load(R"(
extern "C" __global__ void spin(const int* flag, float* out) {
    volatile const int* f = flag;
    while (*f == 0) {
    }
    out[0] = 1.0f;
}
)",
                                "spin");
  LaunchPlan p;
  p.entry = "spin";
  p.buffers = {in_ints("flag", {0}), out_buffer("out", 1)};
  p.params = {{true, 0}, {true, 1}};
  EmulatorOptions o = emulator().options();
  o.timeout = std::chrono::milliseconds(300);
  const CpuEmulator quick(o);
  const auto start = std::chrono::steady_clock::now();
  const CheckReport r = quick.run_checked(k, p, {expect("out", {1.0})}, Tolerance{});
  EXPECT_EQ(r.status, RunStatus::Timeout);
  EXPECT_NE(r.message.find("did not finish within 300 ms"), std::string::npos) << r.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(EmulatedKernels, LaunchAndBuildProblemsAreReportedNotThrown) {
  // Parameters the plan does not pass.
  const EmulatedKernel k = load(kBlockSum, "block_sum");
  LaunchPlan p = block_sum_plan({1.0f}, 1);
  p.params.pop_back();
  EXPECT_EQ(emulator().run(k, p).status, RunStatus::LaunchError);
  p = block_sum_plan({1.0f}, 1);
  p.block = {2048, 1, 1};
  EXPECT_EQ(emulator().run(k, p).status, RunStatus::LaunchError);
  // A kernel that does not compile, one with unknown PTX.
  const EmulatedKernel broken = emulator().load("extern \"C\" __global__ void f(float* o) { o[0] = nope; }", "f");
  EXPECT_FALSE(broken.ok());
  EXPECT_NE(broken.error.find("nope"), std::string::npos) << broken.error;
  EXPECT_EQ(emulator().run(broken, p).status, RunStatus::LoadError);
  const EmulatedKernel ptx =
      emulator().load("extern \"C\" __global__ void f(float* o) {\n asm(\"trap;\");\n}", "f", "ptx.cu");
  EXPECT_FALSE(ptx.ok());
  EXPECT_NE(ptx.error.find("ptx.cu: line 2: inline PTX"), std::string::npos) << ptx.error;
}

TEST_F(EmulatedKernels, BranchCountersOfAnInstrumentedKernel) {
  // fitness/instrument/branch_coverage's gi_branch uses __activemask, __match_any_sync,
  // __ballot_sync and %laneid: each thread counts once per direction it takes.
  const std::string source = R"(
extern "C" __global__ void branches(const float* in, int n, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] > 0.0f && in[i] < 10.0f ? in[i] : 0.0f;
    }
}
)";
  const BranchInstrumentation instrumented = instrument_branches(source, "branches.cu");
  const EmulatedKernel k = load(instrumented.source, "branches");
  std::vector<float> in(100);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) - 50.0f;  // -50 .. 49
  LaunchPlan p;
  p.entry = "branches";
  p.buffers = {in_buffer("in", in), out_buffer("out", 100)};
  p.scalars = {scalar<int>("n", 100)};
  p.params = {{true, 0}, {false, 0}, {true, 1}};
  p.grid = {2, 1, 1};
  p.block = {64, 1, 1};
  std::vector<double> want(100);
  for (std::size_t i = 0; i < 100; ++i) want[i] = in[i] > 0 && in[i] < 10 ? in[i] : 0;
  const CountedRun r = emulator().run_counted(k, p, {expect("out", want)}, Tolerance{0, 0}, kBranchCounterSymbol,
                                              instrumented.counters());
  ASSERT_TRUE(r.check.ok()) << r.check.message;
  ASSERT_EQ(r.counts.size(), instrumented.counters());
  auto count = [&](const std::string& key, bool direction) -> std::uint64_t {
    for (std::size_t s = 0; s < instrumented.sites.size(); ++s)
      if (instrumented.sites[s].key == key) return r.counts[2 * s + (direction ? 1 : 0)];
    ADD_FAILURE() << "no site " << key;
    return 0;
  };
  EXPECT_EQ(count("if@4:5", true), 100u);
  EXPECT_EQ(count("if@4:5", false), 28u);
  // in > 0 for 49 of 100; of those, in < 10 for 9.
  EXPECT_EQ(count("op@5:18", true), 49u);
  EXPECT_EQ(count("op@5:18", false), 51u);
  EXPECT_EQ(count("op@5:34", true), 9u);
  EXPECT_EQ(count("op@5:34", false), 40u);
}

TEST_F(EmulatedKernels, RewritesKeepLineNumbers) {
  const std::string rewritten = emulation::rewrite_for_cpu(
      "a\nextern __shared__\n  float tile[];\nasm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\nb\n");
  EXPECT_EQ(std::count(rewritten.begin(), rewritten.end(), '\n'), 5);
  EXPECT_NE(rewritten.find("float* const tile = reinterpret_cast<float*>(gi_emu::dynamic_shared);"),
            std::string::npos);
  EXPECT_NE(rewritten.find("lane = gi_emu_laneid();"), std::string::npos);
}

}  // namespace
}  // namespace gi::fitness

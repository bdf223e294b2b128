// stage (grammar/edits/stage.cpp, staged_records.*): a buffer each thread
// writes (or reads) as a record of K consecutive elements goes through
// shared memory and out (or in) in consecutive elements. Checked here: the
// rewrite, the sites and
// each refusal with its reason, the launch's dynamic shared memory, the
// families it does not compose with, and (CPU emulator) that the library's
// record-writing kernels give the seed's results staged, a partial last
// block included, while a variant without its barrier or without the
// launch's shared memory fails.
#include <gtest/gtest.h>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "family_test_fixture.hpp"
#include "test_support.hpp"

namespace gi::grammar {
namespace {

// Three floats a thread: two in a loop, one by a literal.
const std::string kKernel =
    "extern \"C\" __global__ void records(const float* in, int n, float* out, float* sums) {\n"
    "    int tid;\n"
    "    float v;\n"
    "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid < n) {\n"
    "        v = in[tid];\n"
    "        for (int i = 0; i < 2; i++) {\n"
    "            out[3 * tid + i] = v + i;\n"
    "        }\n"
    "        out[tid * 3 + 2] = 2.0f * v;\n"
    "        sums[tid] = 3.0f * v;\n"
    "    }\n"
    "}\n";

std::string problem(const std::string& source, const std::string& patch = "stage:out") {
  return edit_problem(Grammar::from_source(source, "k.cu"), parse_patch(patch).edits[0]).value_or("legal");
}

using test::replaced;

TEST(Stage, RecordsGoThroughSharedMemoryAndOutInConsecutiveElements) {
  const Grammar g = Grammar::from_source(kKernel, "k.cu");
  const PatchedKernel k = patch_kernel(g, parse_patch("stage:out"));
  EXPECT_EQ(k.source,
            "extern \"C\" __global__ void records(const float* in, int n, float* out, float* sums) {\n"
            "    int tid;\n"
            "    float v;\n"
            "    // gi stage: the threads' records pass through shared memory; the block moves them to and from global "
            "memory in consecutive elements\n"
            "    extern __shared__ float4 gi_stage_area[];\n"
            "    const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item\n"
            "    float* gi_stage_out = reinterpret_cast<float*>(gi_stage_area);  // 3 a thread\n"
            "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    if (tid < n) {\n"
            "        v = in[tid];\n"
            "        for (int i = 0; i < 2; i++) {\n"
            "            gi_stage_out[(3 * tid + i) - 3 * gi_stage_first] = v + i;\n"
            "        }\n"
            "        gi_stage_out[(tid * 3 + 2) - 3 * gi_stage_first] = 2.0f * v;\n"
            "        sums[tid] = 3.0f * v;\n"
            "    }\n"
            "    __syncthreads();  // gi stage: every record of the block is in shared memory\n"
            "    {\n"
            "        long long gi_items = (long long)(n) - gi_stage_first;  // the block's items below the guard's bound\n"
            "        if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;\n"
            "        for (int gi_j = threadIdx.x; gi_j < 3 * (int)gi_items; gi_j += blockDim.x)\n"
            "            out[3 * gi_stage_first + gi_j] = gi_stage_out[gi_j];\n"
            "    }\n"
            "}\n");
  EXPECT_EQ(k.launch.staged, (std::map<std::string, unsigned>{{"out", 12u}}));
  EXPECT_EQ(to_string(k.launch), ";stage=outx12");
  EXPECT_EQ(to_string(parse_patch("stage:out")), "stage:out");
  // The one site: `sums[tid]` is consecutive already, `in` only read.
  const auto candidates = edit_family("stage").candidates(g, EditContext{});
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].literal, "out");
  EXPECT_TRUE(edit_family("stage").refusals(g, EditContext{}).empty());
}

TEST(Stage, TwoBuffersShareTheDynamicSharedMemoryAtSixteenByteBoundaries) {
  const std::string two = replaced(replaced(kKernel, "float* sums)", "float4* more)"), "        sums[tid] = 3.0f * v;\n",
                                   "        more[2 * tid] = make_float4(v, v, v, v);\n"
                                   "        more[2 * tid + 1] = make_float4(v, v, v, 0.0f);\n");
  const Grammar g = Grammar::from_source(two, "k.cu");
  const PatchedKernel k = patch_kernel(g, parse_patch("stage:out stage:more"));
  // In name order: `more` first, `out` after its 32 bytes a thread.
  EXPECT_NE(k.source.find("float4* gi_stage_more = reinterpret_cast<float4*>(gi_stage_area);  // 2 a thread"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("float* gi_stage_out = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(gi_stage_area) + "
                          "(32u * blockDim.x + 15u) / 16u * 16u);  // 3 a thread"),
            std::string::npos)
      << k.source;
  EXPECT_NE(k.source.find("            more[2 * gi_stage_first + gi_j] = gi_stage_more[gi_j];\n"), std::string::npos);
  EXPECT_NE(k.source.find("            out[3 * gi_stage_first + gi_j] = gi_stage_out[gi_j];\n"), std::string::npos);
  EXPECT_EQ(k.source.find("__syncthreads()"), k.source.rfind("__syncthreads()")) << "one barrier for both";
}

TEST(Stage, RefusedWithTheReason) {
  EXPECT_EQ(problem(kKernel), "legal");
  const auto refused = [](const std::string& source, const std::string& expected) {
    const std::string why = problem(source);
    EXPECT_NE(why.find(expected), std::string::npos) << "expected '" << expected << "' in: " << why;
  };
  refused(replaced(kKernel, "sums[tid] = 3.0f * v;", "sums[tid] = out[3 * tid];"), "'out' is used other than");
  refused(replaced(kKernel, "out[tid * 3 + 2] = 2.0f * v;", "out[tid * 3 + 2] += 2.0f * v;"), "is read or updated");
  refused(replaced(kKernel, "        out[tid * 3 + 2] = 2.0f * v;\n", "        if (v > 0.0f) {\n            out[tid * 3 + 2] = v;\n        }\n"),
          "under a condition");
  refused(replaced(kKernel, "out[tid * 3 + 2] = 2.0f * v;", "out[tid * 3 + 3] = 2.0f * v;"), "reaches outside the thread's record");
  refused(replaced(kKernel, "out[tid * 3 + 2] = 2.0f * v;", "out[tid * 3] = 2.0f * v;"), "write 2 of each record's 3 elements");
  refused(replaced(kKernel, "out[tid * 3 + 2]", "out[tid * 4 + 2]"), "records of 3 and of 4 elements");
  refused(replaced(kKernel, "out[tid * 3 + 2]", "out[tid * n + 2]"), "is not K * tid + c");
  refused(replaced(kKernel, "i < 2; i++) {\n", "i < 2; i++) {\n            if (v < 0.0f) continue;\n"), "holds a continue");
  refused(replaced(kKernel, "    int tid;\n", "    int tid;\n    if (n == 0) return;\n"), "a return on line 3");
  refused(replaced(kKernel, "    if (tid < n) {", "    if (tid < n / 2 + 1) {"), "legal");  // any bound unchanged inside
  refused(replaced(kKernel, "    if (tid < n) {", "    if (tid < 2 * n && tid < n) {"), "the guard holds more than `tid < 2 * n`");
  refused(replaced(kKernel, "    float v;\n    tid =", "    float v;\n    __shared__ float s[32];\n    tid ="), "shared memory or barriers");
  // 15 float4 a thread: 240 bytes, more than a block of 1024 fits.
  std::string big = replaced(replaced(kKernel, "float* out,", "float4* out,"), "i < 2", "i < 14");
  big = replaced(big, "v + i;", "make_float4(v, v, v, v);");
  big = replaced(replaced(big, "3 * tid", "15 * tid"), "out[tid * 3 + 2] = 2.0f * v;", "out[tid * 15 + 14] = make_float4(v, v, v, v);");
  refused(big, "records of 240 bytes");
}

// A read-only buffer read as records: the block copies them in before the
// guard, one barrier, and each thread reads its own from shared memory.
const std::string kReader =
    "extern \"C\" __global__ void lengths(const float* xyz, int n, float* length) {\n"
    "    int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid < n) {\n"
    "        float x = xyz[3 * tid];\n"
    "        float y = xyz[3 * tid + 1];\n"
    "        float z = xyz[3 * tid + 2];\n"
    "        length[tid] = sqrtf(x * x + y * y + z * z);\n"
    "    }\n"
    "}\n";

TEST(Stage, ReadRecordsAreCopiedInBeforeTheGuard) {
  const Grammar g = Grammar::from_source(kReader, "k.cu");
  const PatchedKernel k = patch_kernel(g, parse_patch("stage:xyz"));
  EXPECT_EQ(k.source,
            "extern \"C\" __global__ void lengths(const float* xyz, int n, float* length) {\n"
            "    // gi stage: the threads' records pass through shared memory; the block moves them to and from global "
            "memory in consecutive elements\n"
            "    extern __shared__ float4 gi_stage_area[];\n"
            "    const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item\n"
            "    float* gi_stage_xyz = reinterpret_cast<float*>(gi_stage_area);  // 3 a thread\n"
            "    int tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    {\n"
            "        long long gi_items = (long long)(n) - gi_stage_first;  // the block's items below the guard's bound\n"
            "        if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;\n"
            "        for (int gi_j = threadIdx.x; gi_j < 3 * (int)gi_items; gi_j += blockDim.x)\n"
            "            gi_stage_xyz[gi_j] = xyz[3 * gi_stage_first + gi_j];\n"
            "    }\n"
            "    __syncthreads();  // gi stage: every record the block reads is in shared memory\n"
            "    if (tid < n) {\n"
            "        float x = gi_stage_xyz[(3 * tid) - 3 * gi_stage_first];\n"
            "        float y = gi_stage_xyz[(3 * tid + 1) - 3 * gi_stage_first];\n"
            "        float z = gi_stage_xyz[(3 * tid + 2) - 3 * gi_stage_first];\n"
            "        length[tid] = sqrtf(x * x + y * y + z * z);\n"
            "    }\n"
            "}\n");
  EXPECT_EQ(k.launch.staged, (std::map<std::string, unsigned>{{"xyz", 12u}}));
  const auto refused = [](const std::string& source, const std::string& expected) {
    const std::string why = problem(source, "stage:xyz");
    EXPECT_NE(why.find(expected), std::string::npos) << "expected '" << expected << "' in: " << why;
  };
  // A record element no thread surely reads: the copy-in could read past the buffer.
  refused(replaced(kReader, "float z = xyz[3 * tid + 2];", "float z = x > 0.0f ? xyz[3 * tid + 2] : 0.0f;"),
          "every thread makes read 2 of each record's 3 elements");
  refused(replaced(kReader, "float z = xyz[3 * tid + 2];", "float z = xyz[tid];"), "both as `xyz[tid]` and as records of 3");
  refused(replaced(kReader, "float z = xyz[3 * tid + 2];", "float z = xyz[3 * tid + 2] + xyz[3 * tid + 4];"),
          "reaches outside the thread's record");
  // A buffer read only other ways is no site and no refusal.
  const std::string neighbours = replaced(replaced(replaced(kReader, "xyz[3 * tid]", "xyz[tid + 1]"), "xyz[3 * tid + 1]", "xyz[tid]"),
                                          "xyz[3 * tid + 2]", "xyz[tid + 2]");
  const Grammar other = Grammar::from_source(neighbours, "k.cu");
  EXPECT_TRUE(edit_family("stage").candidates(other, EditContext{}).empty());
  EXPECT_TRUE(edit_family("stage").refusals(other, EditContext{}).empty());
  EXPECT_NE(problem(neighbours, "stage:xyz").find("not written or read as records"), std::string::npos)
      << problem(neighbours, "stage:xyz");
  // A kernel-wide reason is said where a buffer has records, and for an edit that names one.
  const std::string early = replaced(kReader, "    int tid =", "    if (n == 0) return;\n    int tid =");
  const auto listed = edit_family("stage").refusals(Grammar::from_source(early, "k.cu"), EditContext{});
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_NE(listed[0].find("'xyz' written or read as records, but a return on line 2"), std::string::npos) << listed[0];
  EXPECT_TRUE(edit_family("stage").refusals(Grammar::from_source(replaced(neighbours, "    int tid =", "    if (n == 0) return;\n    int tid ="), "k.cu"), EditContext{}).empty());
}

TEST(Stage, DoesNotComposeWithFamiliesThatMoveItems) {
  const std::string simple =
      "extern \"C\" __global__ void pairs(const float* in, int n, float* out) {\n"
      "    int tid;\n"
      "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (tid < n) {\n"
      "        out[2 * tid] = in[tid];\n"
      "        out[2 * tid + 1] = -in[tid];\n"
      "    }\n"
      "}\n";
  const Grammar g = Grammar::from_source(simple, "k.cu");
  EXPECT_NO_THROW(validate_patch(g, parse_patch("stage:out")));
  try {
    validate_patch(g, parse_patch("stage:out coarsen:2"));
    ADD_FAILURE() << "stage with coarsen was accepted";
  } catch (const PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("stage and coarsen do not compose"), std::string::npos) << e.what();
  }
}

TEST(StageLaunch, EachBufferGetsItsRecordsTimesTheBlockRoundedToSixteenBytes) {
  const fitness::KernelSpec spec = fitness::load_kernel_spec(test::source_dir() / "seeds/deformation/jacobian_field");
  const std::map<std::string, double> vars = {{"voxelNumber", 1000}, {"imageDimX", 10}, {"imageDimY", 10}, {"imageDimZ", 10}};
  LaunchEffect effect;
  fitness::LaunchPlan plan;
  fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.dynamic_shared_bytes, 0u);
  effect.staged = {{"jacobianMatrices", 36}};
  fitness::set_launch_geometry(plan, spec, vars, 128, effect);
  EXPECT_EQ(plan.dynamic_shared_bytes, 36u * 128u);
  effect.staged["jacobianDeterminants"] = 12;  // 12 * 100 = 1200 -> 1200 (a multiple of 16)
  fitness::set_launch_geometry(plan, spec, vars, 100, effect);
  EXPECT_EQ(plan.dynamic_shared_bytes, 3600u + 1200u);
  effect.staged["jacobianDeterminants"] = 4;  // 4 * 100 = 400 -> 400; 36 * 100 = 3600 -> 3600
  effect.staged["jacobianMatrices"] = 6;      // 600 -> 608
  fitness::set_launch_geometry(plan, spec, vars, 100, effect);
  EXPECT_EQ(plan.dynamic_shared_bytes, 400u + 608u);
}

class StageFamily : public test::FamilyTest {};

// The library's kernels that write records (9 floats a voxel or node, 6
// float4 a node): their training checks in the emulator, staged. Their
// sizes leave the last block partial.
TEST_F(StageFamily, TheLibrarysRecordWritersGiveTheSeedsResultsStaged) {
  for (const auto& [seed, patch] : {std::pair<std::string, std::string>{"deformation/jacobian_field", "stage:jacobianMatrices"},
                                    {"bspline/jacobian_nodes", "stage:jacobianMatrices"},
                                    {"bspline/second_derivatives", "stage:secondDerivatives"}}) {
    const auto run = emulate(test::source_dir() / "seeds" / seed, patch);
    EXPECT_EQ(run.exit_code, 0) << seed << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << seed << "\n" << run.output;
  }
}

// Both directions in one kernel: the user's interleaved deformation read
// as records (copied in), and the library's jacobian field's records
// written (copied out) together with a read-only field read at neighbours.
TEST_F(StageFamily, ReadRecordsGiveTheSeedsResultsStaged) {
  const auto run = emulate(std::filesystem::path(GI_TEST_DATA) / "user/deformation_to_planes", "stage:deformation");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << run.output;
  const gi::Seed seed = gi::load_seed(std::filesystem::path(GI_TEST_DATA) / "user/deformation_to_planes");
  PatchedKernel variant = patch_kernel(seed.grammar, parse_patch("stage:deformation"), seed.context);
  PatchedKernel no_barrier = variant;
  no_barrier.source = replaced(no_barrier.source, "__syncthreads();", ";");
  EXPECT_EQ(status_of(seed, no_barrier), fitness::RunStatus::WrongOutput);
}

TEST_F(StageFamily, AVariantWithoutItsBarrierOrItsSharedMemoryFails) {
  const gi::Seed seed = gi::load_seed(test::source_dir() / "seeds/deformation/jacobian_field");
  PatchedKernel variant = patch_kernel(seed.grammar, parse_patch("stage:jacobianMatrices"), seed.context);
  compiles(variant.source, "stage:jacobianMatrices");
  EXPECT_EQ(status_of(seed, variant), fitness::RunStatus::Ok);
  PatchedKernel no_barrier = variant;
  no_barrier.source = replaced(no_barrier.source, "__syncthreads();", ";");
  EXPECT_EQ(status_of(seed, no_barrier), fitness::RunStatus::WrongOutput);
  PatchedKernel no_memory = variant;
  no_memory.launch.staged.clear();
  EXPECT_NE(status_of(seed, no_memory), fitness::RunStatus::Ok);
}

}  // namespace
}  // namespace gi::grammar

// The second transformation family: `privatise` (grammar/edits/privatise.cpp),
// its sites and refusals (analysis/privatise_sites.hpp), the work-item
// region it shares with coarsen (grammar/edits/work_item_region.hpp) and the
// launch effects it adds (a grid cap, a private copy's shared memory). Its
// variants compile with NVRTC and give the seed's result in the CPU emulator
// on the user kernels written for it and on the library's joint histogram
// with its switch paths left out. CPU only.
#include <gtest/gtest.h>


#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "analysis/privatise_sites.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kUser = fs::path(GI_TEST_DATA) / "user";

std::vector<std::string> refusals(const std::string& source) {
  return gi::analysis::find_privatise_sites(gi::grammar::parse_kernel(source, "k.cu")).refusals;
}

TEST(PrivatiseSites, FindsScatterIntoABufferAndSaysWhyOthersAreNot) {
  const auto histogram = gi::load_seed(kUser / "histogram256");
  const auto found = gi::analysis::find_privatise_sites(histogram.grammar.parsed());
  ASSERT_EQ(found.sites.size(), 1u);
  EXPECT_EQ(found.sites[0].buffer, "bins");
  EXPECT_EQ(found.sites[0].index, "bin_of(values[i])");
  EXPECT_EQ(found.sites[0].value, "1u");
  EXPECT_EQ(found.sites[0].type, "unsigned int");

  const auto scatter = gi::load_seed(kUser / "grid_scatter");
  ASSERT_EQ(gi::analysis::find_privatise_sites(scatter.grammar.parsed()).sites.size(), 1u);

  // One address for every thread is aggregate's.
  const auto dot = gi::load_seed(kUser / "dot_product");
  const auto none = gi::analysis::find_privatise_sites(dot.grammar.parsed());
  EXPECT_TRUE(none.sites.empty());
  ASSERT_EQ(none.refusals.size(), 1u);
  EXPECT_NE(none.refusals[0].find("its address is not &p[i]"), std::string::npos) << none.refusals[0];

  auto first = [](const std::vector<std::string>& r) { return r.empty() ? std::string("(none)") : r[0]; };
  EXPECT_NE(first(refusals(R"(__global__ void k(const int* x, int n, int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i]], 1);
    if (i == 0) bins[0] = 0;
}
)")).find("the kernel also reads or writes bins"),
            std::string::npos);
  EXPECT_NE(first(refusals(R"(__global__ void k(const int* x, int n, int* bins) {
    extern __shared__ int scratch[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[x[i]], 1);
}
)")).find("dynamic shared memory of its own"),
            std::string::npos);
  EXPECT_NE(first(refusals(R"(__global__ void k(const int* x, int n, int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&bins[x[i]], 1);
    if (x[i] < 0) return;
}
)")).find("the kernel returns in 2 places"),
            std::string::npos);
  EXPECT_NE(first(refusals(R"(__global__ void k(const int* x, int n, int* bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicExch(&bins[x[i]], 1);
    if (i < n) atomicAdd(&bins[x[i]], 1);
}
)")).find("the kernel also reads or writes bins at line 3"),
            std::string::npos);
}

class PrivatiseFamily : public gi::test::FamilyTest {
 protected:
  // A copy of a user seed whose checks hold `n` values, so that a grid cap
  // of 1024 threads makes each thread loop over several items.
  fs::path seed_with_check_size(const std::string& name, int n) {
    const fs::path copy = dir_ / "user" / name;  // a user seed lives in a folder named for its family
    fs::create_directories(copy);
    fs::copy_file(kUser / name / "kernel.cu", copy / "kernel.cu");
    nlohmann::json spec = nlohmann::json::parse(std::ifstream(kUser / name / "spec.json"));
    for (auto& check : spec["workloads"]["train_checks"]) check["variables"]["n"] = n;
    std::ofstream(copy / "spec.json") << spec.dump(2);
    return copy;
  }
};

TEST_F(PrivatiseFamily, EveryVariantOfTheHistogramCompilesAndGivesTheSeedsResult) {
  const gi::Seed seed = gi::load_seed(kUser / "histogram256");
  const auto candidates = gi::grammar::edit_family("privatise").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 4u);  // no cap, and three grid caps with a grid-stride loop
  for (const auto& edit : candidates) {
    const std::string text = gi::grammar::to_string(gi::grammar::Patch{{edit}});
    const auto patched = gi::grammar::patch_kernel(seed.grammar, gi::grammar::Patch{{edit}}, seed.context);
    EXPECT_NE(patched.source.find("atomicAdd(&gi_private[gi_index], 1u);"), std::string::npos) << patched.source;
    EXPECT_EQ(patched.launch.private_buffer, "bins");
    EXPECT_EQ(patched.launch.private_element_bytes, 4u);
    EXPECT_EQ(patched.launch.grid_threads, static_cast<unsigned>(edit.value));
    compiles(patched.source, text);
    const auto run = emulate(kUser / "histogram256", text);
    EXPECT_EQ(run.exit_code, 0) << text << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
}

// A grid cap below the check's size: each thread loops over several items,
// and a block merges one copy for all of them; the same with the scatter
// into a coarse grid (float sums).
TEST_F(PrivatiseFamily, AGridStrideLoopCoversEveryItemOnce) {
  const fs::path histogram = seed_with_check_size("histogram256", 5003);
  const gi::Seed seed = gi::load_seed(histogram);
  const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(&bins");
  const std::string edit = "privatise:<_kernel.cu_" + std::to_string(line) + ">=1024";
  const std::string source = gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch(edit), seed.context);
  EXPECT_NE(source.find("for (int gi_item = 0; ; gi_item++) {"), std::string::npos) << source;
  EXPECT_NE(source.find("int i = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x;"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("if ((long long)i + (long long)gridDim.x * blockDim.x >= (long long)(n)) break;"),
            std::string::npos)
      << source;
  const auto run = emulate(histogram, edit);
  EXPECT_EQ(run.exit_code, 0) << run.output;

  const gi::Seed scatter = gi::load_seed(kUser / "grid_scatter");
  for (const auto& e : gi::grammar::edit_family("privatise").candidates(scatter.grammar, scatter.context)) {
    if (e.value != 65536) continue;
    const auto scattered = emulate(kUser / "grid_scatter", gi::grammar::to_string(gi::grammar::Patch{{e}}));
    EXPECT_EQ(scattered.exit_code, 0) << scattered.output;
  }
}

// The checks see a variant that loses the counts.
TEST_F(PrivatiseFamily, AVariantThatLosesTheCountsFails) {
  const gi::Seed seed = gi::load_seed(kUser / "histogram256");
  const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(&bins");
  const std::string rule = "<_kernel.cu_" + std::to_string(line) + ">";
  const auto run = emulate(kUser / "histogram256", "privatise:" + rule + "=0 " + rule);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("\"status\": \"wrong_output\""), std::string::npos) << run.output;
}

// With coarsen in the same patch the later edit's loop is made (one wrap);
// a patch privatising two buffers is refused.
TEST_F(PrivatiseFamily, ComposesWithCoarsenAndTakesOneBuffer) {
  const gi::Seed seed = gi::load_seed(kUser / "histogram256");
  const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(&bins");
  const std::string privatise = "privatise:<_kernel.cu_" + std::to_string(line) + ">=65536";
  const auto coarsened_last =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch(privatise + " coarsen:4"), seed.context);
  EXPECT_EQ(coarsened_last.launch.coarsen, 4);
  EXPECT_EQ(coarsened_last.launch.grid_threads, 0u);
  EXPECT_NE(coarsened_last.source.find("gi_item < 4"), std::string::npos) << coarsened_last.source;
  const auto privatised_last =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch("coarsen:4 " + privatise), seed.context);
  EXPECT_EQ(privatised_last.launch.coarsen, 1);
  EXPECT_EQ(privatised_last.launch.grid_threads, 65536u);
  for (const auto& patch : {"coarsen:4 " + privatise, privatise + " coarsen:4,strided"}) {
    const auto run = emulate(kUser / "histogram256", patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
  }

  const auto two = gi::grammar::Grammar::from_source(R"(__global__ void k(const int* x, int n, int* a, int* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&a[x[i]], 1);
        atomicAdd(&b[x[i] / 2], 1);
    }
}
)",
                                                     "k.cu");
  const auto both = gi::grammar::edit_family("privatise").candidates(two, {});
  ASSERT_EQ(both.size(), 8u);  // two buffers, four grid caps each
  EXPECT_THROW(gi::grammar::apply_patch(two, gi::grammar::Patch{{both[0], both[4]}}, {}), gi::grammar::PatchError);
  EXPECT_NO_THROW(gi::grammar::apply_patch(two, gi::grammar::Patch{{both[0], both[1]}}, {}));
}

// Legality on the patched source: a line edit of the same patch may not copy
// a return (or a barrier) into a kernel whose threads must all reach the
// rewrite's barriers; without a transformation it may.
TEST(TransformLegality, ALineEditMayNotCopyAReturnIntoATransformedKernel) {
  const auto g = gi::grammar::Grammar::from_source(R"(__global__ void k(const float* x, int n, float* t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    atomicAdd(t, x[i]);
}
)",
                                                   "k.cu");
  const gi::grammar::Patch copy = gi::grammar::parse_patch("<_k.cu_6>+<_k.cu_4>");
  EXPECT_NO_THROW(gi::grammar::validate_patch(g, copy, {}));
  try {
    gi::grammar::validate_patch(g, gi::grammar::parse_patch("aggregate:<_k.cu_6>=block <_k.cu_6>+<_k.cu_4>"), {});
    ADD_FAILURE() << "a copied return was let into an aggregated kernel";
  } catch (const gi::grammar::PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("copies a line with return"), std::string::npos) << e.what();
  }
}

// The launch: grid capped to whole blocks; the copy's bytes from the spec's
// element count, or none when it does not fit.
TEST(PrivatiseLaunch, CapsTheGridAndGivesTheCopyItsBytes) {
  const auto spec = gi::fitness::load_kernel_spec(kUser / "histogram256" / "spec.json");
  gi::grammar::LaunchEffect effect;
  effect.grid_threads = 65536;
  effect.private_buffer = "bins";
  effect.private_element_bytes = 4;
  const auto plan = gi::fitness::launch_plan_shape(spec, {{"n", 4194304}}, 256, effect);
  EXPECT_EQ(plan.grid[0], 256u);
  EXPECT_EQ(plan.dynamic_shared_bytes, 1024u);
  const auto small = gi::fitness::launch_plan_shape(spec, {{"n", 1003}}, 256, effect);
  EXPECT_EQ(small.grid[0], 4u);  // below the cap: the seed's grid

  const auto joint = gi::fitness::load_kernel_spec(gi::test::source_dir() / "seeds/similarity/nmi_joint_histogram/spec.json");
  gi::grammar::LaunchEffect copy;
  copy.private_buffer = "jointHistogram";
  copy.private_element_bytes = 4;
  std::map<std::string, double> v = {{"voxelNumber", 1000}, {"activeVoxelNumber", 1000}, {"referenceBinNumber", 64},
                                     {"warpedBinNumber", 64}, {"jointBinNumber", 4096}, {"referenceScale", 1},
                                     {"referenceOffset", 0}, {"warpedScale", 1}, {"warpedOffset", 0}};
  EXPECT_EQ(gi::fitness::launch_plan_shape(joint, v, 128, copy).dynamic_shared_bytes, 16384u);
  v["jointBinNumber"] = 128 * 128;  // 64 KiB: more than a private copy gets
  EXPECT_EQ(gi::fitness::launch_plan_shape(joint, v, 128, copy).dynamic_shared_bytes, 0u);
  copy.private_buffer = "activeVoxelNumber";
  EXPECT_THROW(gi::fitness::launch_plan_shape(joint, v, 128, copy), std::runtime_error);
}

// The library's joint histogram with its hand-written paths left out: the
// plain kernel's 16 float atomics per voxel go to a private copy; its checks
// include a histogram too large for one (global fallback inside the kernel).
TEST_F(PrivatiseFamily, TheLibrarysPlainJointHistogramPassesItsChecksPrivatised) {
  const fs::path dir = gi::test::source_dir() / "seeds/similarity/nmi_joint_histogram";
  const gi::Seed seed = gi::load_seed(dir);
  const auto candidates = gi::grammar::edit_family("privatise").candidates(seed.grammar, seed.context);
  ASSERT_EQ(candidates.size(), 8u);  // four grid caps, each in float and (its spec bounds a voxel's share) fixed point
  for (const std::size_t i : {4u, 5u}) {  // 65536 threads: float, then fixed point
    const std::string edit = gi::grammar::to_string(gi::grammar::Patch{{candidates[i]}});
    const auto run = emulate(dir, edit);
    EXPECT_EQ(run.exit_code, 0) << edit << "\n" << run.output;
  }
  EXPECT_EQ(candidates[5].literal, "fixed");
}

// Fixed point: the copy counts ints in units of 2^-gi_shift, each product
// rounded once; the same variant with the unit left out of the merge fails.
TEST_F(PrivatiseFamily, AFloatSumCountedInFixedPointGivesTheSeedsResult) {
  const fs::path dir = gi::test::source_dir() / "seeds/similarity/nmi_joint_histogram";
  const gi::Seed seed = gi::load_seed(dir);
  const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(&jointHistogram");
  const std::string edit = "privatise:<_kernel.cu_" + std::to_string(line) + ">=0,fixed";
  for (const std::string& patch : {edit, edit + " coarsen:8", "coarsen:4,strided " + edit}) {
    const auto run = emulate(dir, patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
  gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch(edit), seed.context);
  EXPECT_NE(variant.source.find("extern __shared__ int gi_private[];"), std::string::npos) << variant.source;
  EXPECT_NE(variant.source.find("__float2int_rn((referenceWeight[a] * warpedWeight[b]) * gi_scale)"), std::string::npos)
      << variant.source;
  EXPECT_NE(variant.source.find("times 0.5 (the spec's accumulation_bound)"), std::string::npos) << variant.source;
  EXPECT_EQ(variant.launch.private_element_bytes, 4u);
  compiles(variant.source, edit);
  const std::string merge = "(float)gi_private[gi_i] * gi_unit";
  const std::size_t at = variant.source.find(merge);
  ASSERT_NE(at, std::string::npos) << variant.source;
  variant.source.replace(at, merge.size(), "(float)gi_private[gi_i]");
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::WrongOutput);
}

// Fixed point only where the spec bounds a float sum and the guard names the items in parameters.
TEST_F(PrivatiseFamily, FixedPointIsRefusedWithTheReasonWhereItCannotBeBounded) {
  const auto& family = gi::grammar::edit_family("privatise");
  auto why = [&](const gi::Seed& seed, const std::string& buffer) {
    const int line = gi::test::last_rule_line_holding(seed, "atomicAdd(&" + buffer);
    const auto problem = family.problem(seed.grammar, seed.context,
                                        gi::grammar::parse_patch("privatise:<_kernel.cu_" + std::to_string(line) + ">=0,fixed").edits[0]);
    return problem.value_or("(legal)");
  };
  const gi::Seed histogram = gi::load_seed(kUser / "histogram256");
  EXPECT_NE(why(histogram, "bins").find("fixed point counts float sums only"), std::string::npos) << why(histogram, "bins");
  const gi::Seed slices = gi::load_seed(kUser / "slice_sums");
  EXPECT_NE(why(slices, "sums").find("declares no accumulation_bound for sums"), std::string::npos) << why(slices, "sums");
  for (const auto& e : family.candidates(slices.grammar, slices.context)) EXPECT_TRUE(e.literal.empty());
  // With a bound, its guard `index < voxels` names a local, set after the body's start.
  const fs::path copy = dir_ / "user" / "slice_sums";
  fs::create_directories(copy);
  fs::copy_file(kUser / "slice_sums" / "kernel.cu", copy / "kernel.cu");
  nlohmann::json spec = nlohmann::json::parse(std::ifstream(kUser / "slice_sums" / "spec.json"));
  for (auto& p : spec["parameters"])
    if (p["name"] == "sums") p["accumulation_bound"] = 1;
  std::ofstream(copy / "spec.json") << spec.dump(2);
  const gi::Seed bounded = gi::load_seed(copy);
  EXPECT_NE(why(bounded, "sums").find("names voxels, which is no parameter of the kernel"), std::string::npos)
      << why(bounded, "sums");
}

}  // namespace

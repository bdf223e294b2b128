// `scatter_cache` (grammar/edits/scatter_cache.cpp): a block's cache of a
// scattered-into buffer in shared memory, slots tagged by index. Its
// variants compile with NVRTC and give the seed's result in the CPU emulator
// on the scatters of the user kernels (a coarse grid far too large to copy,
// histograms, a joint histogram with an early return), alone and with
// coarsening; a variant that loses the cached values fails the same checks;
// two caches in one patch conflict; atomics that are no scatter are refused.
// CPU only.
#include <gtest/gtest.h>


#include <filesystem>
#include <fstream>

#include "fitness/compile/nvrtc_compiler.hpp"
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

class ScatterCache : public gi::test::FamilyTest {
 protected:
  // The site's rule name of a kernel's one cache candidate per slot count.
  static std::string site_of(const gi::Seed& seed) {
    const auto candidates = gi::grammar::edit_family("scatter_cache").candidates(seed.grammar, seed.context);
    EXPECT_EQ(candidates.size(), 3u);  // 256, 1024 and 4096 slots
    return candidates.empty() ? std::string() : candidates[0].target;
  }
};

TEST_F(ScatterCache, TheUserScattersGiveTheSeedsResult) {
  for (const char* name : {"grid_scatter", "histogram256", "joint_histogram64", "slice_sums"}) {
    const gi::Seed seed = gi::load_seed(kUser / name);
    const std::string site = site_of(seed);
    ASSERT_FALSE(site.empty()) << name;
    const std::string edit = "scatter_cache:" + site + "=256";
    const std::string source = gi::grammar::apply_patch(seed.grammar, gi::grammar::parse_patch(edit), seed.context);
    EXPECT_NE(source.find("__shared__ unsigned int gi_cache_tag[256];"), std::string::npos) << source;
    gi::fitness::CompileRequest r;
    r.source = source;
    r.file_name = "kernel.cu";
    const auto compiled = gi::fitness::Compiler(std::nullopt).compile(r);
    EXPECT_TRUE(compiled.ok) << name << ": " << compiled.error << "\n" << source;
    const auto run = emulate(kUser / name, edit);
    EXPECT_EQ(run.exit_code, 0) << name << " " << edit << "\n" << run.output;
    EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << run.output;
  }
  // The coarse grid (32^3 nodes at the training size, far above what privatise can copy) with coarsening.
  const gi::Seed scatter = gi::load_seed(kUser / "grid_scatter");
  for (const std::string& patch : {"scatter_cache:" + site_of(scatter) + "=1024 coarsen:8",
                                   "scatter_cache:" + site_of(scatter) + "=4096 coarsen:4,strided"}) {
    const auto run = emulate(kUser / "grid_scatter", patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
  }
}

// The checks that pass the variants above see a wrong one: with the
// statement deleted, nothing reaches the cache or the grid.
TEST_F(ScatterCache, AVariantThatLosesTheValuesFails) {
  const gi::Seed seed = gi::load_seed(kUser / "grid_scatter");
  const std::string site = site_of(seed);
  const auto run = emulate(kUser / "grid_scatter", "scatter_cache:" + site + "=1024 " + site);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("\"status\": \"wrong_output\""), std::string::npos) << run.output;
}

TEST_F(ScatterCache, TwoBuffersCachedConflictAndNoScatterIsRefused) {
  const gi::Seed seed = gi::load_seed(kUser / "grid_scatter");
  const std::string site = site_of(seed);
  // One buffer cached twice: the later slot count is the cache made.
  const std::string twice = gi::grammar::apply_patch(
      seed.grammar, gi::grammar::parse_patch("scatter_cache:" + site + "=256 scatter_cache:" + site + "=4096"), seed.context);
  EXPECT_NE(twice.find("gi_cache_tag[4096]"), std::string::npos) << twice;
  EXPECT_EQ(twice.find("gi_cache_tag[256]"), std::string::npos) << twice;
  // Two buffers: the tags hold indices only, so one cache per kernel.
  const auto two = gi::grammar::Grammar::from_source(R"(__global__ void two(const int* v, int n, unsigned int* a, unsigned int* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&a[v[i] & 15], 1u);
        atomicAdd(&b[(v[i] >> 4) & 15], 1u);
    }
}
)",
                                                     "k.cu");
  const auto candidates = gi::grammar::edit_family("scatter_cache").candidates(two, {});
  ASSERT_EQ(candidates.size(), 6u);
  try {
    gi::grammar::validate_patch(two, gi::grammar::Patch{{candidates[0], candidates[3]}}, {});
    ADD_FAILURE() << "two buffers cached in one kernel";
  } catch (const gi::grammar::PatchError& e) {
    EXPECT_NE(std::string(e.what()).find("two buffers cached in one kernel"), std::string::npos) << e.what();
  }
  // One address for every thread is aggregate's, and says so.
  const gi::Seed dot = gi::load_seed(kUser / "dot_product");
  EXPECT_TRUE(gi::grammar::edit_family("scatter_cache").candidates(dot.grammar, dot.context).empty());
}

}  // namespace

// The plain user kernels of tests/data/user (README.md there lists them):
// each spec loads, each transformation family has the legal edits it had
// when the kernel was written, and one or two of those edits per kernel
// give the seed's result in the CPU emulator on the kernel's training
// checks. The kernels no transformation family takes are refused with
// their reason: what the analyses cannot yet see. CPU only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/aggregate_sites.hpp"
#include "analysis/privatise_sites.hpp"
#include "analysis/warp_per_item_sites.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kUser = fs::path(GI_TEST_DATA) / "user";

// A family's candidate to emulate: its position in the family's candidates.
struct Emulated {
  std::string family;
  std::size_t index = 0;
};

// What each family offers on a kernel, and which candidates are emulated.
struct UserKernel {
  std::string name;
  std::size_t aggregate = 0, privatise = 0, warp_per_item = 0, coarsen = 0;
  std::vector<Emulated> emulated;
  std::size_t remap = 0, registers = 0, stage = 0;
};

// Candidate order: aggregate per site warp, block, warp_cg, block_cg, then
// (two sites or more) `all` at the same four levels; privatise per buffer
// grid caps 0, 65536, 262144, 1048576 (the caps only where the kernel has an
// `if (tid < N)` guard); warp_per_item per loop the group sizes 8 and 32;
// coarsen the factors 2, 4, 8, 16, 32, each consecutive, strided, then with vector
// loads where a buffer is read only at the item (15; 10 without).
const std::vector<UserKernel> kKernels = {
    // An early exit, `if (i >= n) return;`: coarsening runs to the kernel's end, the return a `continue`.
    {"count_positive", 4, 0, 0, 15, {{"aggregate", 1}, {"coarsen", 5}}},
    {"dot_product", 4, 0, 0, 15, {{"aggregate", 0}}},
    {"vector_max", 4, 0, 0, 15, {{"aggregate", 1}}},
    {"histogram256", 0, 4, 0, 15, {{"privatise", 1}}},
    {"grid_scatter", 0, 4, 0, 15, {{"privatise", 0}}},
    {"row_sum", 0, 0, 2, 10, {{"warp_per_item", 1}, {"coarsen", 3}}},
    // Early return: no guard for a grid-stride loop, so no grid cap; coarsening to the kernel's end.
    {"joint_histogram64", 0, 1, 0, 15, {{"privatise", 0}, {"coarsen", 4}}},
    {"slice_sums", 0, 4, 0, 10, {{"privatise", 0}, {"privatise", 2}}},
    // The user's own grid-stride loop: aggregate only.
    {"weighted_sum", 4, 0, 0, 0, {{"aggregate", 0}}},
    // A while loop keeping a maximum through a helper: a warp per row, and coarsening.
    {"row_max", 0, 0, 2, 10, {{"warp_per_item", 0}, {"warp_per_item", 1}, {"coarsen", 3}}},
    // `if (i < n) { ... } else { return; }`: the trailing return is dropped, both totals aggregate.
    {"masked_mean", 12, 0, 0, 0, {{"aggregate", 1}, {"aggregate", 9}}},
    // A 2-D kernel whose x thread index walks the rows: the axes swapped.
    {"scale_rows", 0, 0, 0, 0, {{"remap", 0}}, 1},
    // A lookup table in a local array, indexed by the data: read through selects; coarsening past the early return.
    {"transfer_curve", 0, 0, 0, 15, {{"registers", 0}, {"coarsen", 3}}, 0, 1},
    // Three floats a voxel, interleaved: the records through shared memory; coarsening with vector loads of the planes.
    {"planes_to_deformation", 0, 0, 0, 15, {{"stage", 0}}, 0, 0, 1},
    // Its inverse: three floats a voxel read interleaved, copied in by the block; no vector loads (no `p[tid]` read).
    {"deformation_to_planes", 0, 0, 0, 10, {{"stage", 0}}, 0, 0, 1},
};

class UserKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gi-user-kernels-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `gi emulate SEED --patch EDIT`: exit code and output.
  gi::test::CommandOutput emulate(const fs::path& seed, const std::string& edit) {
    const fs::path patch = dir_ / "p.gi";
    std::ofstream(patch) << edit << "\n";
    return gi::test::run_gi("emulate \"" + seed.string() + "\" --patch \"" + patch.string() + "\" --cache \"" +
                            (dir_ / "cache").string() + "\"");
  }

  fs::path dir_;
};

// Every folder of tests/data/user has a row above, so a kernel added there
// without one fails here.
TEST_F(UserKernels, EveryFolderIsListed) {
  std::set<std::string> listed, found;
  for (const auto& k : kKernels) listed.insert(k.name);
  for (const auto& entry : fs::directory_iterator(kUser))
    if (entry.is_directory()) found.insert(entry.path().filename().string());
  EXPECT_EQ(found, listed);
  EXPECT_GE(found.size(), 8u);
}

TEST_F(UserKernels, EverySpecLoadsWithTheSeedAsItsReference) {
  for (const auto& k : kKernels) {
    SCOPED_TRACE(k.name);
    const gi::fitness::KernelSpec spec = gi::fitness::load_kernel_spec(kUser / k.name);
    EXPECT_EQ(spec.entry, k.name);
    EXPECT_EQ(spec.family, "user");
    EXPECT_TRUE(spec.reference_is_seed);
    EXPECT_FALSE(spec.tolerance_note.empty());
    EXPECT_FALSE(spec.train_checks.empty());
    for (const auto& check : spec.train_checks) EXPECT_FALSE(check.purpose.empty()) << check.json_path;
    EXPECT_GE(spec.validate.size(), 5u);
  }
}

TEST_F(UserKernels, EachFamilyHasTheLegalEditsItHadWhenTheKernelWasWritten) {
  for (const auto& k : kKernels) {
    SCOPED_TRACE(k.name);
    const gi::Seed seed = gi::load_seed(kUser / k.name);
    const auto count = [&](const char* family) {
      return gi::grammar::edit_family(family).candidates(seed.grammar, seed.context).size();
    };
    EXPECT_EQ(count("aggregate"), k.aggregate);
    EXPECT_EQ(count("privatise"), k.privatise);
    EXPECT_EQ(count("warp_per_item"), k.warp_per_item);
    EXPECT_EQ(count("coarsen"), k.coarsen);
    EXPECT_EQ(count("remap"), k.remap);
    EXPECT_EQ(count("registers"), k.registers);
    EXPECT_EQ(count("stage"), k.stage);
  }
}

// One or two candidates per kernel (the six older kernels' others are
// emulated in aggregate_test, privatise_test and warp_per_item_test).
TEST_F(UserKernels, TheirCandidatesGiveTheSeedsResultInTheEmulator) {
  for (const auto& k : kKernels) {
    const gi::Seed seed = gi::load_seed(kUser / k.name);
    for (const auto& e : k.emulated) {
      const auto candidates = gi::grammar::edit_family(e.family).candidates(seed.grammar, seed.context);
      ASSERT_LT(e.index, candidates.size()) << k.name << " " << e.family;
      const std::string text = gi::grammar::to_string(gi::grammar::Patch{{candidates[e.index]}});
      const auto run = emulate(kUser / k.name, text);
      EXPECT_EQ(run.exit_code, 0) << k.name << " " << text << "\n" << run.output;
      EXPECT_NE(run.output.find("\"status\": \"ok\""), std::string::npos) << k.name << " " << text << "\n" << run.output;
      EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << k.name << " " << text << "\n" << run.output;
    }
  }
}

// What the analyses cannot yet see, with their reasons, and a return they now see through.
TEST_F(UserKernels, KernelsNoTransformationTakesAreRefusedWithTheirReason) {
  // The `else { return; }` of the guard is the kernel's last statement and
  // changes nothing: aggregate drops it (and still refuses a return inside a loop).
  const gi::Seed masked = gi::load_seed(kUser / "masked_mean");
  const auto aggregate = gi::analysis::find_aggregate_sites(masked.grammar.parsed());
  ASSERT_EQ(aggregate.sites.size(), 2u);
  EXPECT_EQ(aggregate.sites[0].trailing_returns.size(), 1u);
  const gi::Seed seed = gi::load_seed(kUser / "masked_mean");
  const std::string source = gi::grammar::apply_patch(
      seed.grammar, gi::grammar::Patch{{gi::grammar::edit_family("aggregate").candidates(seed.grammar, seed.context)[1]}},
      seed.context);
  EXPECT_EQ(source.find("        return;"), std::string::npos) << source;  // the comment above the kernel says return; too
  const auto in_loop = gi::analysis::find_aggregate_sites(gi::grammar::parse_kernel(R"(__global__ void k(const float* x, int n, float* t) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        atomicAdd(t, x[i]);
        return;
    }
}
)", "k.cu"));
  EXPECT_TRUE(in_loop.sites.empty());


  // The user's grid-stride loop has its index in the loop header.
  const gi::Seed weighted = gi::load_seed(kUser / "weighted_sum");
  EXPECT_TRUE(gi::analysis::find_privatise_sites(weighted.grammar.parsed()).sites.empty());
  EXPECT_TRUE(gi::grammar::edit_family("coarsen").candidates(weighted.grammar, weighted.context).empty());
}

}  // namespace

// `registers` (grammar/edits/registers.cpp): a small local array read at a
// computed index is read through selects with literal indices, so ptxas
// keeps it in registers. The reads' rewrite, the sites and refusals, and on
// the library's voxel_to_node_gradient: the variant compiles with no stack
// frame where the seed has one, and gives the seed's result in the CPU
// emulator. CPU only.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "analysis/register_arrays.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/search/search.hpp"
#include "tests/family_test_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using gi::analysis::read_through_selects;

const fs::path kVoxelToNode = fs::path(GI_SOURCE_DIR) / "seeds" / "tools" / "voxel_to_node_gradient";

TEST(RegistersRewrite, ComputedReadsBecomeSelectsAndEverythingElseStays) {
  int count = 0;
  EXPECT_EQ(read_through_selects("w = b[a] * 2.0f;", "b", 3, &count),
            "w = (a == 0 ? b[0] : (a == 1 ? b[1] : b[2])) * 2.0f;");
  EXPECT_EQ(count, 1);
  // An expression index is parenthesised; two reads on one line.
  EXPECT_EQ(read_through_selects("s += b[i + 1] - b[j];", "b", 2, &count),
            "s += ((i + 1) == 0 ? b[0] : b[1]) - (j == 0 ? b[0] : b[1]);");
  EXPECT_EQ(count, 2);
  // Left alone: literal indices, writes, an address, a member of another
  // object, an index with a side effect or a call, a comment, another name.
  for (const std::string same : {"b[2] = b[0] + b[1];", "b[i] = 1.0f;", "b[i] += x;", "b[i]++;", "++b[i];", "p = &b[i];",
                                 "x = s.b[i];", "x = b[i++];", "x = b[f(i)];", "// b[i]", "x = bb[i] + ab[i];"}) {
    EXPECT_EQ(read_through_selects(same, "b", 4, &count), same);
    EXPECT_EQ(count, 0) << same;
  }
  // An element of an element: the inner read only.
  EXPECT_EQ(read_through_selects("x = b[b[i]];", "b", 2), "x = b[(i == 0 ? b[0] : b[1])];");
  // A bitwise and before the read is no address-of; a cast in the index is no call.
  EXPECT_EQ(read_through_selects("m = k & b[(int)u];", "b", 2), "m = k & (((int)u) == 0 ? b[0] : b[1]);");
}

TEST(RegistersSites, ArraysWrittenAtAComputedIndexOrTooLongAreRefusedWithTheirReason) {
  const auto k = gi::grammar::parse_kernel(R"(__device__ void fill(float u, float* b) { b[0] = u; b[1] = 1.0f - u; }
__global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float basis[2];
    float table[4];
    float big[32];
    float known[3];
    __shared__ float tile[8];
    if (i < n) {
        fill(in[i], basis);
        for (int a = 0; a < 4; a++) {
            table[a] = in[a];
        }
        big[0] = 1.0f;
        known[0] = 0.0f; known[1] = 1.0f; known[2] = 2.0f;
        tile[threadIdx.x % 8] = in[i];
        out[i] = basis[i % 2] + table[i % 4] + big[i % 32] + known[1] + tile[i % 8];
    }
}
)",
                                           "k.cu");
  const auto found = gi::analysis::find_register_arrays(k);
  ASSERT_EQ(found.sites.size(), 1u);
  EXPECT_EQ(found.sites[0].name, "basis");
  EXPECT_EQ(found.sites[0].size, 2);
  EXPECT_EQ(found.sites[0].computed_reads, 1);
  // known: literal reads only, already registers; tile: shared, no thread's own. Neither site nor refusal.
  ASSERT_EQ(found.refusals.size(), 2u);
  EXPECT_NE(found.refusals[0].find("line 5: table is written at a computed index (line 12)"), std::string::npos) << found.refusals[0];
  EXPECT_NE(found.refusals[1].find("line 6: big has 32 elements"), std::string::npos) << found.refusals[1];
}

class Registers : public gi::test::FamilyTest {};

// The library's voxel-to-node gradient picks one of four B-spline basis
// values per axis and voxel: its three basis arrays sit in local memory
// (a 48-byte stack frame). Read through selects, none does, and the result
// is the seed's.
TEST_F(Registers, TheBasisArraysOfVoxelToNodeLeaveLocalMemoryAndTheResultStays) {
  const gi::Seed seed = gi::load_seed(kVoxelToNode);
  const auto candidates = gi::grammar::edit_family("registers").candidates(seed.grammar, seed.context);
  std::vector<std::string> names;
  std::string patch_text;
  for (const auto& e : candidates) {
    names.push_back(e.literal);
    patch_text += (patch_text.empty() ? "" : " ") + gi::grammar::to_string(e);
  }
  ASSERT_EQ(names, (std::vector<std::string>{"xBasis", "yBasis", "zBasis"}));
  const gi::grammar::PatchedKernel variant =
      gi::grammar::patch_kernel(seed.grammar, gi::grammar::parse_patch(patch_text), seed.context);
  EXPECT_NE(variant.source.find("(a == 0 ? xBasis[0] : (a == 1 ? xBasis[1] : (a == 2 ? xBasis[2] : xBasis[3])))"),
            std::string::npos)
      << variant.source;
  EXPECT_NE(variant.source.find("// gi registers: zBasis is read below"), std::string::npos);

  auto stack_frame = [](const std::string& source) {
    gi::fitness::CompileRequest r;
    r.source = source;
    gi::fitness::Compiler compiler(std::nullopt);
    const auto result = compiler.compile(r);
    EXPECT_TRUE(result.ok) << result.error;
    return result.stack_frame_bytes;
  };
  const gi::grammar::PatchedKernel plain = gi::grammar::patch_kernel(seed.grammar, gi::grammar::Patch{}, seed.context);
  EXPECT_GE(stack_frame(plain.source), 48);
  EXPECT_EQ(stack_frame(variant.source), 0);
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::Ok);

  // One array alone, through gi emulate (every training workload).
  const auto run = emulate(kVoxelToNode, gi::grammar::to_string(candidates[0]));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << run.output;
}

// A select that reads the wrong element is caught: the check is not blind.
TEST_F(Registers, AChainOffByOneFailsTheCheck) {
  const gi::Seed seed = gi::load_seed(kVoxelToNode);
  gi::grammar::PatchedKernel variant = gi::grammar::patch_kernel(
      seed.grammar, gi::grammar::parse_patch(gi::grammar::to_string(
                        gi::grammar::edit_family("registers").candidates(seed.grammar, seed.context).at(0))),
      seed.context);
  // The last read is the plain path's (the seed's default); the tiled path's, on a path left out, comes first.
  const std::string right = "(a == 1 ? xBasis[1] :";
  const std::size_t at = variant.source.rfind(right);
  ASSERT_NE(at, std::string::npos);
  variant.source.replace(at, right.size(), "(a == 1 ? xBasis[2] :");
  EXPECT_NE(status_of(seed, variant), gi::fitness::RunStatus::Ok);
}

// Where the first generation's half is too small for every family's edits,
// the families take turns: with room for six, voxel_to_node's three switch
// settings leave three, and registers and warp_per_item both get theirs.
// Registers adds no barrier, so a patch may also copy one (patch_apply's
// check for families that need every thread together leaves it out).
TEST(RegistersSearch, TheFirstGenerationGivesEachFamilyItsTurn) {
  const gi::Seed seed = gi::load_seed(kVoxelToNode);
  gi::OperatorConfig config;
  config.context = seed.context;
  const gi::EditOperators ops(seed.grammar, config);
  gi::SearchConfig c;
  c.population = 12;
  std::mt19937_64 rng(3);
  const auto first = gi::make_search(c, ops)->propose(gi::SearchState{}, rng);
  auto holds = [&](const std::string& family) {
    return std::count_if(first.begin(), first.begin() + 6, [&](const gi::grammar::Patch& p) {
      return p.edits.size() == 1 && p.edits[0].family == family;
    });
  };
  EXPECT_EQ(holds("registers"), 2);
  EXPECT_EQ(holds("warp_per_item"), 1);
  EXPECT_FALSE(gi::grammar::edit_family("registers").needs_threads_together());
  EXPECT_TRUE(gi::grammar::edit_family("warp_per_item").needs_threads_together());
}

}  // namespace

// `coarsen:K,vector` (grammar/edits/coarsen.cpp, grammar/edits/vector_loads.*):
// consecutive items, and each buffer read only as p[tid] loaded as vectors
// before the thread's loop. Checked here: the rewrite, where it is refused
// and why, and (CPU emulator) that the variants give the seed's results,
// the sizes that leave a tail included, and that a variant that unpacks a
// vector wrongly fails.
#include <gtest/gtest.h>

#include "family_test_fixture.hpp"
#include "gi/seed/seed.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/patch_apply.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using gi::grammar::Grammar;
using gi::grammar::parse_patch;

const std::string kScale =
    "extern \"C\" __global__ void scale(const float* in, int n, float* out) {\n"
    "    int tid;\n"
    "    float v;\n"
    "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (tid < n) {\n"
    "        v = in[tid];\n"
    "        out[tid] = 2.0f * v;\n"
    "    }\n"
    "}\n";

TEST(CoarsenVector, ReadOnlyBuffersAreLoadedAsVectorsBeforeTheLoop) {
  const Grammar g = Grammar::from_source(kScale, "k.cu");
  const std::string out = gi::grammar::apply_patch(g, parse_patch("coarsen:8,vector"));
  EXPECT_NE(out.find("    const int gi_first = (blockIdx.x * blockDim.x + threadIdx.x) * 8;"), std::string::npos) << out;
  EXPECT_NE(out.find("if (gi_first + 8 <= (n) && ((unsigned long long)(in + gi_first) & 15ull) == 0ull) {"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("const float4 gi_w = *reinterpret_cast<const float4*>(in + gi_first + gi_v);"), std::string::npos)
      << out;
  EXPECT_NE(out.find("            v = gi_vec_in[gi_item];\n            out[tid] = 2.0f * v;"), std::string::npos) << out;
  EXPECT_NE(out.find("        tid = (blockIdx.x * blockDim.x + threadIdx.x) * 8 + gi_item;"), std::string::npos) << out;
  EXPECT_EQ(gi::grammar::to_string(parse_patch("coarsen:8,vector")), "coarsen:8,vector");
  // Two items a thread: one float2.
  EXPECT_NE(gi::grammar::apply_patch(g, parse_patch("coarsen:2,vector")).find("const float2 gi_w"), std::string::npos);
  // A later coarsen without vectors takes its place whole: no copy read where none is made.
  const std::string replaced = gi::grammar::apply_patch(g, parse_patch("coarsen:8,vector coarsen:4"));
  EXPECT_EQ(replaced.find("gi_vec_in"), std::string::npos) << replaced;
  EXPECT_EQ(replaced, gi::grammar::apply_patch(g, parse_patch("coarsen:4")));
}

TEST(CoarsenVector, RefusedWithTheReason) {
  const auto problem = [](const std::string& source, const std::string& patch = "coarsen:4,vector") {
    return gi::grammar::edit_problem(Grammar::from_source(source, "k.cu"), parse_patch(patch).edits[0]).value_or("legal");
  };
  EXPECT_EQ(problem(kScale), "legal");
  std::string neighbour = kScale;
  neighbour.replace(neighbour.find("v = in[tid];"), 12, "v = in[tid] + in[tid + 1];");
  EXPECT_NE(problem(neighbour).find("no buffer is read only as p[tid]"), std::string::npos) << problem(neighbour);
  std::string local_bound = kScale;
  local_bound.replace(local_bound.find("if (tid < n)"), 12, "if (tid < m)");
  local_bound.replace(local_bound.find("    float v;\n"), 12, "    float v;\n    int m = n / 2;\n");
  EXPECT_NE(problem(local_bound).find("the guard's bound over kernel parameters ('m')"), std::string::npos)
      << problem(local_bound);
  EXPECT_NE(problem(kScale, "coarsen:6,vector").find("a power of two"), std::string::npos);
  std::string written = kScale;
  written.replace(written.find("const float* in"), 15, "float* in");
  written.replace(written.find("out[tid] = 2.0f * v;"), 20, "in[tid] = 2.0f * v;");
  EXPECT_NE(problem(written).find("no buffer is read only"), std::string::npos) << "'in' is written: " << problem(written);
}

class CoarsenVectorFamily : public gi::test::FamilyTest {};

// Against the seed in the emulator: the user dot product (a tail of 1003 %
// 8 items on its small check) and the library's intensity range, exact.
TEST_F(CoarsenVectorFamily, VariantsGiveTheSeedsResults) {
  const fs::path dot = fs::path(GI_TEST_DATA) / "user/dot_product";
  for (const std::string& patch : {std::string("coarsen:4,vector"), std::string("aggregate:<_kernel.cu_7>=block coarsen:8,vector")}) {
    const auto run = emulate(dot, patch);
    EXPECT_EQ(run.exit_code, 0) << patch << "\n" << run.output;
    EXPECT_EQ(run.output.find("\"ok\": false"), std::string::npos) << patch << "\n" << run.output;
  }
  const fs::path minmax = gi::test::source_dir() / "seeds/tools/intensity_minmax";
  const auto run = emulate(minmax, "aggregate:all=block coarsen:8,vector");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const gi::Seed seed = gi::load_seed(dot);
  const auto candidates = gi::grammar::edit_family("coarsen").candidates(seed.grammar, seed.context);
  EXPECT_TRUE(std::any_of(candidates.begin(), candidates.end(), [](const auto& e) { return e.literal == "vector"; }));
}

TEST_F(CoarsenVectorFamily, AVariantThatUnpacksWronglyFails) {
  const gi::Seed seed = gi::load_seed(fs::path(GI_TEST_DATA) / "user/dot_product");
  gi::grammar::PatchedKernel variant =
      gi::grammar::patch_kernel(seed.grammar, parse_patch("coarsen:4,vector"), seed.context);
  compiles(variant.source, "coarsen:4,vector");
  EXPECT_EQ(status_of(seed, variant), gi::fitness::RunStatus::Ok);
  const std::string unpack = "gi_vec_x[gi_v + 1] = gi_w.y;";
  const std::size_t at = variant.source.find(unpack);
  ASSERT_NE(at, std::string::npos) << variant.source;
  variant.source.replace(at, unpack.size(), "gi_vec_x[gi_v + 1] = gi_w.x;");
  EXPECT_EQ(status_of(seed, variant, 0), gi::fitness::RunStatus::WrongOutput);
}

}  // namespace

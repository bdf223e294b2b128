// Two-stage compiles (NVRTC to PTX, then ptxas once per
// distinct PTX) must give what a one-stage NVRTC compile gives, and must
// skip ptxas when a variant's PTX was seen before. CPU only: both stages run
// without a GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/compile/ptx_assembler.hpp"
#include "test_support.hpp"

namespace {

using namespace gi::fitness;

std::string seed_source() {
  std::ifstream in(gi::test::source_dir() / "seeds/bspline/deformation_field/kernel.cu");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty());
  return text.str();
}

CompileRequest request(const std::string& source, std::vector<std::string> options = {}) {
  CompileRequest r;
  r.source = source;
  r.options = std::move(options);
  return r;
}

// A statement the optimiser removes: a different source with the same PTX.
std::string with_dead_statement(std::string source) {
  const std::string anchor = "    tid = blockIdx.x * blockDim.x + threadIdx.x;\n";
  const auto at = source.find(anchor);
  EXPECT_NE(at, std::string::npos);
  source.insert(at + anchor.size(), "    index = tid * 3;\n");
  return source;
}

class TwoStageCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ptx_assembler_available()) GTEST_SKIP() << "no ptxas of NVRTC's release: " << ptx_assembler_problem();
  }
};

TEST_F(TwoStageCompile, GivesTheSameResourcesAsOneStage) {
  for (const auto& options : std::vector<std::vector<std::string>>{{}, {"--use_fast_math"}, {"--maxrregcount=32"}}) {
    Compiler one(std::nullopt), two(std::nullopt);
    one.set_two_stage(false);
    ASSERT_TRUE(two.two_stage());
    const CompileResult a = one.compile(request(seed_source(), options));
    const CompileResult b = two.compile(request(seed_source(), options));
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_TRUE(b.ok) << b.error << "\n" << b.log;
    EXPECT_EQ(std::string(b.cubin.begin(), b.cubin.begin() + 4), "\x7f" "ELF");
    EXPECT_GT(b.registers, 0) << b.log;
    EXPECT_EQ(a.registers, b.registers) << "options " << (options.empty() ? "none" : options[0]);
    EXPECT_EQ(a.spill_store_bytes, b.spill_store_bytes);
    EXPECT_EQ(a.stack_frame_bytes, b.stack_frame_bytes);
    if (!options.empty() && options[0] == "--maxrregcount=32") {
      EXPECT_LE(b.registers, 32);
    }
  }
}

TEST_F(TwoStageCompile, SamePtxIsAssembledOnce) {
  Compiler compiler(std::nullopt);
  const CompileResult first = compiler.compile(request(seed_source(), {"--use_fast_math"}));
  const CompileResult second = compiler.compile(request(with_dead_statement(seed_source()), {"--use_fast_math"}));
  ASSERT_TRUE(first.ok && second.ok) << first.error << second.error;
  EXPECT_NE(first.key, second.key);  // different sources...
  EXPECT_FALSE(first.ptx_reused);
  EXPECT_TRUE(second.ptx_reused);    // ...one ptxas run
  EXPECT_EQ(first.cubin, second.cubin);
  EXPECT_EQ(first.registers, second.registers);
  EXPECT_EQ(compiler.stats().ptx_reuses, 1);
  EXPECT_EQ(compiler.stats().compiles, 2);
}

TEST_F(TwoStageCompile, PtxasOptionsArePartOfThePtxKey) {
  // Same PTX, different register cap: must not share a cubin.
  Compiler compiler(std::nullopt);
  const CompileResult free_regs = compiler.compile(request(seed_source()));
  const CompileResult capped = compiler.compile(request(seed_source(), {"--maxrregcount=32"}));
  ASSERT_TRUE(free_regs.ok && capped.ok);
  EXPECT_FALSE(capped.ptx_reused);
  EXPECT_LE(capped.registers, 32);
  EXPECT_GT(free_regs.registers, 32);
}

TEST_F(TwoStageCompile, FrontEndErrorsKeepTheirLog) {
  Compiler compiler(std::nullopt);
  std::string broken = seed_source();
  broken.replace(broken.find("u3 = u2 * u;"), 12, "u3 = u2 * ;");
  const CompileResult r = compiler.compile(request(broken));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("nvrtcCompileProgram"), std::string::npos) << r.error;
  EXPECT_NE(r.log.find("expected an expression"), std::string::npos) << r.log;
}

TEST_F(TwoStageCompile, BadPtxIsAnErrorNotACrash) {
  const Assembly a = assemble_ptx(".version 8.0\n.target sm_90\nthis is not ptx\n", "sm_90", {});
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.error.find("ptxas failed"), std::string::npos) << a.error;
}

}  // namespace

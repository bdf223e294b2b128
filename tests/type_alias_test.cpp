// A project's own name for a type (grammar/type_aliases.hpp), a global index
// written for a block size of its own (`bx * NUMBER_THREADS + tx`), and the
// CPU emulator given the build's headers: Rodinia's srad_v1 kernels, whose
// `fp` and NUMBER_THREADS live in a define.c the host includes first, draft
// with no FILL (gi init --pre-include define.c) and pass their check on the
// emulator.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fitness/emulation/emulation_source.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "grammar/type_aliases.hpp"
#include "parameter_use_support.hpp"
#include "test_support.hpp"

namespace gi {
namespace {

namespace fs = std::filesystem;

TEST(TypeAliases, MacrosTypedefsAndUsingsOfBuiltInTypes) {
  const auto a = grammar::type_aliases(
      "#define fp float   // the element type\n"
      "#define NUMBER_THREADS 512\n"
      "#define SQR(x) ((x) * (x))\n"
      "typedef unsigned int index_t;\n"
      "typedef float* float_ptr;\n"
      "typedef struct { float x; } point;\n"
      "using real = double;\n"
      "/* #define hidden int */\n");
  EXPECT_EQ(a.at("fp"), "float");
  EXPECT_EQ(a.at("index_t"), "unsigned int");
  EXPECT_EQ(a.at("real"), "double");
  for (const char* none : {"NUMBER_THREADS", "SQR", "float_ptr", "point", "hidden"}) EXPECT_FALSE(a.count(none)) << none;
  EXPECT_EQ(grammar::resolve_type_alias(a, "fp"), "float");
  EXPECT_EQ(grammar::resolve_type_alias(a, "int"), "int");
}

TEST(TypeAliases, TheEmulatorGetsTheHeadersInlinedWithTheirLines) {
  const std::string out = fitness::emulation::with_headers_inlined(
      "#include \"a.h\"\n#include <math.h>\n#include \"a.h\"\nint k;\n", "kernel.cu",
      {{"a.h", "#include \"b.h\"\nint a;\n"}, {"b.h", "int b;\n"}, {"define.c", "#define fp float\n"}}, {"define.c"});
  EXPECT_EQ(out,
            "#line 1 \"define.c\"\n#define fp float\n\n"
            "#line 1 \"kernel.cu\"\n"
            "#line 1 \"a.h\"\n#line 1 \"b.h\"\nint b;\n\n#line 2 \"a.h\"\nint a;\n\n#line 2 \"kernel.cu\"\n"
            "#include <math.h>\n"
            "#line 4 \"kernel.cu\"\n"  // a.h a second time: nothing, as its guard would
            "int k;\n\n");
}

TEST(TypeAliases, AGlobalIndexWrittenForItsOwnBlockSizeIsTheGlobalIndex) {
  const auto u = test::use_of(
      "#define NUMBER_THREADS 512\n"
      "__global__ void k(long n, float* out) {\n"
      "  int bx = blockIdx.x;\n"
      "  int tx = threadIdx.x;\n"
      "  int ei = (bx * NUMBER_THREADS) + tx;\n"
      "  if (ei < n) out[ei] = 1.f;\n"
      "}\n");
  EXPECT_EQ(test::count(u, "out"), "n");
  EXPECT_EQ(u.work.written_block, 512);
  ASSERT_TRUE(u.work.bound[0]);
  EXPECT_EQ(u.work.bound[0]->text(), "n");
  // A width with no one value is no global index.
  const auto unknown = test::use_of(
      "__global__ void k(int n, int width, float* out) {\n"
      "  const int i = blockIdx.x * width + threadIdx.x;\n"
      "  if (i < n) out[i] = 1.f;\n"
      "}\n");
  EXPECT_EQ(unknown.work.written_block, 0);
  EXPECT_FALSE(unknown.work.bound[0]);
}

// A kernel file and a define.c beside it, as Rodinia's srad_v1 keeps them.
struct SradLike : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi-type-alias-" + std::to_string(::getpid()));
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
    std::ofstream(dir / "src" / "define.c") << "#define fp float\n#define NUMBER_THREADS 512\n";
    std::ofstream(dir / "src" / "scale_kernel.cu")
        << "__global__ void scale(long d_Ne, fp *d_I, fp *d_out) {\n"
           "  int bx = blockIdx.x;\n"
           "  int tx = threadIdx.x;\n"
           "  int ei = (bx * NUMBER_THREADS) + tx;\n"
           "  if (ei < d_Ne) d_out[ei] = d_I[ei] * 255;\n"
           "}\n";
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(SradLike, GiInitDraftsNoFillAndTheEmulatedCheckPasses) {
  const fs::path seed = dir / "user" / "scale";
  const test::CommandOutput r =
      test::run_gi("init \"" + (dir / "src" / "scale_kernel.cu").string() + "\" --pre-include define.c --size d_Ne=100000 --out \"" +
                   seed.string() + "\" --check");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(0 fields to fill)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("block size fixed at 512"), std::string::npos) << r.output;
  const fitness::KernelSpec k = fitness::load_kernel_spec(seed, {.registry = false});
  EXPECT_EQ(k.parameters[1].type_name, "float");
  EXPECT_EQ(k.block_sizes, std::vector<unsigned>{512});
  // The spec's check follows the alias in the pre-include: double is not fp.
  nlohmann::json spec = nlohmann::json::parse(read_text_file(seed / "spec.json"));
  spec["parameters"][1]["type"] = "double";
  std::ofstream(seed / "spec.json") << spec.dump(2);
  try {
    fitness::load_kernel_spec(seed, {.registry = false});
    ADD_FAILURE() << "double matched fp";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'double' does not match the type 'fp' (an alias of float)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gi

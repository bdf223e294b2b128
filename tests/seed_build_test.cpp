// A seed compiles as its user's build does (gi/seed/seed_build.hpp): the
// headers its includes name are found beside the kernel and in spec.json's
// include_dirs, handed to NVRTC with their text (never looked for in the
// working directory), part of the compile key; spec.json's nvrtc_options
// reach NVRTC. Real NVRTC compiles, no GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

struct SeedBuildTest : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi-seed-build-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir / "seed");
    fs::create_directories(dir / "include/lib");
    write("seed/kernel.cu",
          "#include \"scale.h\"\n#include <lib/offset.h>\n#include <cuda_fp16.h>\n"
          "extern \"C\" __global__ void k(float* o) {\n  o[0] = SCALE * o[0] + OFFSET + EXTRA;\n}\n");
    write("seed/scale.h", "#define SCALE 2.0f\n");
    write("include/lib/offset.h", "#include \"more.h\"\n#define OFFSET (1.0f + MORE)\n");
    write("include/lib/more.h", "#define MORE 0.5f\n");
    write("seed/spec.json", R"({"include_dirs": ["../include"], "nvrtc_options": ["-DEXTRA=3.0f"]})");
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
  static fitness::CompileResult compile(const Seed& seed) {
    return compile_variant(seed, grammar::Patch{}, Tuning{}, "sm_90", std::nullopt).binary;
  }
};

// The project's headers, without the stand-ins of standard headers that
// the toolkit's headers name (cuda_fp16.h: <stdint.h>, ...).
std::vector<std::pair<std::string, std::string>> project_headers(const Seed& seed) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& h : seed.build.headers)
    if (h.second.rfind(kSetAsideHeader, 0) != 0) out.push_back(h);
  return out;
}

TEST_F(SeedBuildTest, HeadersComeFromTheKernelsFolderAndTheSpecsIncludeDirs) {
  const Seed seed = load_seed(dir / "seed");
  const auto headers = project_headers(seed);
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers[0].first, "scale.h");
  EXPECT_EQ(headers[1].first, "lib/offset.h");
  EXPECT_EQ(headers[2].first, "more.h");  // as offset.h writes it, found beside offset.h
  EXPECT_EQ(headers[2].second, "#define MORE 0.5f\n");
  EXPECT_EQ(seed.build.nvrtc_options, std::vector<std::string>({"-DEXTRA=3.0f"}));
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

TEST_F(SeedBuildTest, TheWorkingDirectoryIsNeverSearched) {
  const fs::path cwd = fs::current_path();
  fs::create_directories(dir / "elsewhere");
  write("elsewhere/scale.h", "#error the working directory's scale.h was read\n");
  fs::current_path(dir / "elsewhere");
  const Seed seed = load_seed(dir / "seed");
  const fitness::CompileResult c = compile(seed);
  fs::current_path(cwd);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

TEST_F(SeedBuildTest, AnEditedHeaderChangesTheCompileKey) {
  const Seed before = load_seed(dir / "seed");
  write("seed/scale.h", "#define SCALE 3.0f\n");
  const Seed after = load_seed(dir / "seed");
  const auto request = [](const Seed& s) {
    return variant_request(variant_source(s, grammar::Patch{}), s, Tuning{}, "sm_90");
  };
  EXPECT_EQ(request(before).source, request(after).source);
  EXPECT_NE(fitness::compile_key(request(before)), fitness::compile_key(request(after)));
}

TEST_F(SeedBuildTest, CommandLineFoldersAndOptionsAddToTheSpecs) {
  write("seed/spec.json", "{}");
  Seed seed = load_seed(dir / "seed");
  EXPECT_EQ(project_headers(seed).size(), 1u);  // scale.h only: lib/offset.h is nowhere yet
  EXPECT_FALSE(compile(seed).ok);
  add_to_build(seed, {dir / "include"}, {"-DEXTRA=1.0f"});
  EXPECT_EQ(project_headers(seed).size(), 3u);
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
  EXPECT_THROW(add_to_build(seed, {dir / "no-such-folder"}, {}), std::runtime_error);
}

// The search compiles on compile-server processes: the headers travel with
// each request.
TEST_F(SeedBuildTest, CompileServersGetTheHeadersToo) {
  const Seed seed = load_seed(dir / "seed");
  fitness::Compiler compiler(std::nullopt);
  compiler.set_compile_servers(test::gi_binary(), 1);
  const fitness::CompileResult c =
      compiler.compile(variant_request(variant_source(seed, grammar::Patch{}), seed, Tuning{}, "sm_90"));
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

// A real .cu file holds host code too (main, launches, host-only headers):
// NVRTC gets the kernels with the host functions' lines blank and empty
// stand-ins for the system headers it does not have; what is published
// keeps every line.
// The toolkit's cuda.h (the driver API header, which many kernel files
// include) names <stdlib.h> and <stdint.h>, which NVRTC lacks: their
// stand-ins hold the types, and the file compiles (the corpus survey's most
// common failure, bench/corpus/compile_results_*.md).
TEST_F(SeedBuildTest, TheToolkitsCudaHCompilesWithTheStandardTypesStandingIn) {
  write("seed/spec.json", "{}");
  write("seed/kernel.cu",
        "#include \"cuda.h\"\n#include <stdint.h>\n#include <climits>\n"
        "__global__ void k(uint32_t* o, int64_t n) {\n  if (threadIdx.x < n) o[threadIdx.x] = UINT32_MAX - INT_MAX;\n}\n");
  const Seed seed = load_seed(dir / "seed");
  std::set<std::string> names;
  for (const auto& [name, text] : seed.build.headers) names.insert(name);
  EXPECT_TRUE(names.count("stdlib.h")) << "named by the toolkit's cuda.h";
  EXPECT_TRUE(names.count("stdint.h"));
  EXPECT_FALSE(names.count("cuda.h")) << "the toolkit's own headers are NVRTC's to open";
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

// CUDA 13 keeps libcu++, CUB and Thrust in the toolkit's include/cccl, and
// cooperative_groups.h includes <cuda/std/type_traits> from there: without
// that folder on NVRTC's path a kernel using cooperative groups or a CUB
// block primitive did not compile at all.
TEST_F(SeedBuildTest, CooperativeGroupsAndCubHeadersCompile) {
  if (!fs::is_directory(fitness::toolkit_include_dir() / "cccl")) GTEST_SKIP() << "a toolkit without include/cccl";
  write("seed/spec.json", "{}");
  write("seed/kernel.cu",
        "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
        "#include <cub/warp/warp_reduce.cuh>\n"
        "namespace cg = cooperative_groups;\n"
        "extern \"C\" __global__ void k(const float* x, int n, float* total) {\n"
        "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float v = cg::reduce(warp, i < n ? x[i] : 0.0f, cg::plus<float>());\n"
        "  if (warp.thread_rank() == 0) atomicAdd(total, v);\n}\n");
  const Seed seed = load_seed(dir / "seed");
  for (const auto& [name, text] : seed.build.headers)
    EXPECT_EQ(name.rfind("cuda/", 0), std::string::npos) << name << ": the toolkit's own headers are NVRTC's to open";
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

// libcu++ under NVRTC declares the fixed-width integers itself, as long long
// (cuda/std/cstdint): the stand-in <stdint.h> must name the same types, or
// a file that includes both (NiftyReg's headers: <cstdint> and thrust) stops
// at "invalid redeclaration of type name int64_t".
TEST_F(SeedBuildTest, TheStandardIntegersStandInAgreesWithLibcuxx) {
  if (!fs::is_directory(fitness::toolkit_include_dir() / "cccl")) GTEST_SKIP() << "a toolkit without include/cccl";
  write("seed/spec.json", "{}");
  write("seed/kernel.cu",
        "#include <stdint.h>\n#include <cuda/std/cstdint>\n"
        "__global__ void k(int64_t* o, uint64_t n) {\n  if (threadIdx.x < n) o[threadIdx.x] = INT64_MAX;\n}\n");
  const fitness::CompileResult c = compile(load_seed(dir / "seed"));
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

TEST_F(SeedBuildTest, HostCodeIsSetAsideForNvrtcAndKeptWhenPublished) {
  write("seed/spec.json", "{}");
  write("seed/kernel.cu",
        "#include <stdio.h>\n#include <iostream>\n#include <cuda_runtime.h>\n"
        "__global__ void twice(float* o, int n) {\n  int i = threadIdx.x;\n  if (i < n) o[i] *= 2.f;\n}\n"
        "void launch(float* o, int n) {\n  twice<<<1, 32>>>(o, n);\n  std::cout << \"done\" << std::endl;\n}\n"
        "int main() {\n  float* d = nullptr;\n  cudaMalloc(&d, 128);\n  launch(d, 32);\n  printf(\"%p\\n\", d);\n"
        "  return 0;\n}\n");
  const Seed seed = load_seed(dir / "seed");
  std::set<std::string> stand_ins, others;
  for (const auto& [name, text] : seed.build.headers)
    (text.rfind(kSetAsideHeader, 0) == 0 ? stand_ins : others).insert(name);
  EXPECT_TRUE(stand_ins.count("stdio.h") && stand_ins.count("iostream"));
  EXPECT_TRUE(others.empty()) << "cuda_runtime.h is the toolkit's: NVRTC opens it";
  const VariantSource v = variant_source(seed, grammar::Patch{});
  EXPECT_NE(v.source.find("twice<<<1, 32>>>"), std::string::npos);
  EXPECT_EQ(v.compile_source.find("twice<<<"), std::string::npos);
  EXPECT_EQ(v.compile_source.find("main"), std::string::npos);
  EXPECT_EQ(std::count(v.source.begin(), v.source.end(), '\n'), std::count(v.compile_source.begin(), v.compile_source.end(), '\n'));
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

// A kernel file that its project's host file #includes after its own
// definitions (Rodinia's `#include "define.c"` then `#include "kernel.cu"`):
// the spec's pre_includes (or --pre-include) hand those to NVRTC first, and
// the grammar learns their types, so `fp d = 0;` is a declaration that an
// insert cannot copy above.
TEST_F(SeedBuildTest, PreIncludesGiveTheNamesAnIncludingHostFileWould) {
  write("seed/define.c", "#define fp float\n#define THREADS 64\n");
  write("seed/kernel.cu",
        "__global__ void k(fp* o, int n) {\n  int i = blockIdx.x * THREADS + threadIdx.x;\n  fp d;\n"
        "  d = 2;\n  if (i < n) o[i] = o[i] * d;\n}\n");
  write("seed/spec.json", R"({"pre_includes": ["define.c"]})");
  const Seed seed = load_seed(dir / "seed");
  EXPECT_EQ(seed.build.pre_includes, std::vector<std::string>({"define.c"}));
  EXPECT_EQ(seed.build.compile_options(), std::vector<std::string>({"--pre-include=define.c"}));
  ASSERT_EQ(project_headers(seed).size(), 1u);
  EXPECT_EQ(project_headers(seed)[0].first, "define.c");
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
  // Line 3 declares d: a declaration, and line 4's use of it cannot be copied above it.
  for (std::size_t r = 0; r < seed.grammar.rules().size(); ++r) {
    if (seed.grammar.rule(r).first_line == 3) {
      EXPECT_EQ(seed.grammar.rule(r).kind, grammar::RuleKind::Declaration);
    }
  }

  // Without the pre-include the seed does not compile: the test above is not vacuous.
  write("seed/spec.json", "{}");
  const Seed bare = load_seed(dir / "seed");
  EXPECT_FALSE(compile(bare).ok);
  // The command line's --pre-include does the same.
  Seed added = load_seed(dir / "seed");
  add_to_build(added, {}, {}, {"define.c"});
  EXPECT_TRUE(compile(added).ok);
  // One found nowhere is named.
  try {
    add_to_build(added, {}, {}, {"nowhere.h"});
    ADD_FAILURE() << "a missing pre-include was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pre-include 'nowhere.h': not found"), std::string::npos) << e.what();
  }
}

// `gi mutants k.cu` from the kernel's own folder: a bare file name is a seed
// whose folder is the working directory (it failed with "cannot make
// absolute path").
TEST_F(SeedBuildTest, ABareFileNameIsASeedInTheWorkingDirectory) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir / "seed");
  try {
    const Seed seed = load_seed("kernel.cu");
    fs::current_path(cwd);
    EXPECT_EQ(seed.display_path, "kernel.cu");
    // As from its folder's path: scale.h beside it, the spec's ../include for the others.
    const auto headers = project_headers(seed);
    ASSERT_EQ(headers.size(), 3u);
    EXPECT_EQ(headers[0].first, "scale.h");
  } catch (...) {
    fs::current_path(cwd);
    throw;
  }
}

// Host function declarations are host code too: set aside for NVRTC, which
// lacks their types (std::vector), and kept when published. A declaration on
// the device, or a macro call that may expand to device code, stays.
TEST_F(SeedBuildTest, HostDeclarationsAreSetAside) {
  write("seed/spec.json", "{}");
  write("seed/kernel.cu",
        "#include <vector>\n"
        "struct Rec { float d; };\n"
        "int load(char* name, std::vector<Rec>& records);\n"
        "template <class T> void fill(T* p, int n) { std::vector<T> v(n); }\n"
        "template void fill<float>(float* p, int n);\n"
        "__device__ float twice(float x);\n"
        "__global__ void k(Rec* o) { o[0].d = twice(o[0].d); }\n"
        "__device__ float twice(float x) { return 2.f * x; }\n");
  const Seed seed = load_seed(dir / "seed");
  const VariantSource v = variant_source(seed, grammar::Patch{});
  EXPECT_NE(v.source.find("int load("), std::string::npos);
  EXPECT_EQ(v.compile_source.find("int load("), std::string::npos);
  EXPECT_EQ(v.compile_source.find("template void fill<float>"), std::string::npos);
  EXPECT_NE(v.compile_source.find("__device__ float twice(float x);"), std::string::npos);
  const fitness::CompileResult c = compile(seed);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

TEST_F(SeedBuildTest, AMalformedBuildInTheSpecIsNamed) {
  for (const auto& [spec, what] : std::vector<std::pair<std::string, std::string>>{
           {R"({"include_dirs": "../include"})", "include_dirs: expected an array"},
           {R"({"include_dirs": ["../nowhere"]})", "include_dirs: '../nowhere' is not a folder"},
           {R"({"nvrtc_options": [3]})", "nvrtc_options[0]: expected a non-empty string"},
           {R"({"pre_includes": [""]})", "pre_includes[0]: expected a non-empty string"}}) {
    write("seed/spec.json", spec);
    try {
      load_seed(dir / "seed");
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("spec.json: " + what), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gi

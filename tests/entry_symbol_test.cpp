// Entry points as real code has them (fitness/gpu/entry_symbol.hpp): an
// extern "C" kernel by its name, a C++ kernel by its source name though its
// symbol is mangled, a template instance that NVRTC emits only when it is
// named (CompileRequest::name_expressions). The compile side runs here
// (NVRTC to PTX, whose .entry lines are the module's symbols); loading by
// source name runs on a GPU (GpuEntry.*, skipped without one).
#include <gtest/gtest.h>

#include <regex>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/gpu/entry_symbol.hpp"
#include "fitness/gpu/gpu_runner.hpp"

namespace gi::fitness {
namespace {

constexpr const char* kSource = R"(
extern "C" __global__ void plain(float* o) { o[0] = 1.f; }
__global__ void cpp_kernel(float* o, int n) { if (n > 0) o[0] = 2.f; }
namespace reg { namespace cuda {
template <typename T, int N>
__global__ void scale(T* o, int n) { if (n > 0) o[0] = static_cast<T>(N); }
__global__ void twice(float* o) { o[0] *= 2.f; }
__global__ void twice(double* o) { o[0] *= 2.0; }
} }
)";

// The kernels (.entry symbols) of a PTX text.
std::vector<std::string> ptx_entries(const std::vector<char>& ptx) {
  const std::string text(ptx.begin(), ptx.end());
  std::vector<std::string> out;
  const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

std::vector<std::string> compiled_entries(const std::vector<std::string>& names) {
  CompileRequest r;
  r.source = kSource;
  r.file_name = "entries.cu";
  r.arch = "compute_90";
  r.name_expressions = names;
  Compiler compiler(std::nullopt);
  const CompileResult c = compiler.compile(r);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
  return ptx_entries(c.cubin);
}

TEST(EntrySymbol, ATemplateInstanceExistsOnlyWhenNamed) {
  EXPECT_TRUE(match_entry(compiled_entries({}), "reg::cuda::scale<float, 2>").symbol.empty());
  const auto symbols = compiled_entries({"reg::cuda::scale<float, 2>"});
  const EntryMatch m = match_entry(symbols, "reg::cuda::scale<float,2>");  // spaces do not matter
  ASSERT_FALSE(m.symbol.empty()) << m.problem;
  EXPECT_EQ(demangle(m.symbol), "void reg::cuda::scale<float, 2>(float*, int)");
  EXPECT_TRUE(entry_is_template_instance("scale<float, 2>"));
  EXPECT_FALSE(entry_is_template_instance("cpp_kernel"));
}

TEST(EntrySymbol, ExternCByNameAndCppKernelsByTheirSourceName) {
  const auto symbols = compiled_entries({});
  EXPECT_EQ(match_entry(symbols, "plain").symbol, "plain");
  const EntryMatch cpp = match_entry(symbols, "cpp_kernel");
  ASSERT_FALSE(cpp.symbol.empty()) << cpp.problem;
  EXPECT_NE(cpp.symbol, "cpp_kernel");  // mangled
  EXPECT_EQ(demangle(cpp.symbol), "cpp_kernel(float*, int)");
}

// NiftyReg's kernels, in `namespace NiftyReg::Cuda { namespace { ... } }`:
// the symbol as NVRTC mangles it, found by the plain and the qualified name.
TEST(EntrySymbol, AKernelOfAnUnnamedNamespaceByItsSourceName) {
  const std::vector<std::string> symbols = {"_ZN8NiftyReg4Cuda12_GLOBAL__N_115ReduceRigidSumsEPKfS3_iPd", "plain"};
  ASSERT_EQ(demangle(symbols[0]), "NiftyReg::Cuda::(anonymous namespace)::ReduceRigidSums(float const*, float const*, int, double*)");
  EXPECT_EQ(match_entry(symbols, "ReduceRigidSums").symbol, symbols[0]) << match_entry(symbols, "ReduceRigidSums").problem;
  EXPECT_EQ(match_entry(symbols, "NiftyReg::Cuda::ReduceRigidSums").symbol, symbols[0]);
  EXPECT_TRUE(match_entry(symbols, "Cuda").symbol.empty());
}

TEST(EntrySymbol, OverloadsAndUnknownNamesAreProblemsNamingTheCandidates) {
  const auto symbols = compiled_entries({});
  const EntryMatch overloaded = match_entry(symbols, "twice");
  EXPECT_TRUE(overloaded.symbol.empty());
  EXPECT_NE(overloaded.problem.find("names 2 kernels"), std::string::npos) << overloaded.problem;
  EXPECT_NE(overloaded.problem.find("reg::cuda::twice(double*)"), std::string::npos) << overloaded.problem;
  const EntryMatch none = match_entry(symbols, "missing");
  EXPECT_NE(none.problem.find("no kernel named 'missing'"), std::string::npos) << none.problem;
  EXPECT_NE(none.problem.find("cpp_kernel(float*, int)"), std::string::npos) << none.problem;
}

TEST(GpuEntry, AMangledKernelLoadsByItsSourceName) {
  const CudaEnvironment env = probe_cuda();
  if (!env.driver_ok || env.gpus.empty()) GTEST_SKIP() << "no CUDA device: " << env.message;
  GpuRunner runner(0);
  CompileRequest r;
  r.source = kSource;
  r.file_name = "entries.cu";
  r.arch = runner.arch();
  r.name_expressions = {"reg::cuda::scale<float, 2>"};
  const CompileResult c = Compiler(std::nullopt).compile(r);
  ASSERT_TRUE(c.ok) << c.error << "\n" << c.log;
  for (const char* entry : {"plain", "cpp_kernel", "reg::cuda::scale<float, 2>"}) {
    const LoadResult loaded = runner.load(c.cubin, entry);
    EXPECT_TRUE(loaded.ok()) << entry << ": " << loaded.message;
  }
  const LoadResult overloaded = runner.load(c.cubin, "twice");
  EXPECT_FALSE(overloaded.ok());
  EXPECT_NE(overloaded.message.find("names 2 kernels"), std::string::npos) << overloaded.message;
}

}  // namespace
}  // namespace gi::fitness

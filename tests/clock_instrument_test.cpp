// The clock-tick instrumentation (fitness/instrument/clock_instrument.hpp) as a source
// transform: no GPU needed; the GPU test is GpuRunnerCheck.ClockTicksOfAnInstrumentedKernel.
#include <gtest/gtest.h>

#include "fitness/instrument/clock_instrument.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"

namespace {

using namespace gi::fitness;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ClockInstrument, WrapperKeepsTheEntryNameAndAddsTheCounterPointer) {
  const std::string source =
      "extern \"C\" __global__ void __launch_bounds__(256, 2) k(const float* in, float* out, int n) {\n"
      "    int i;\n"
      "    i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "    if (i >= n) {\n"
      "        return;\n"
      "    }\n"
      "    out[i] = in[i];\n"
      "}\n";
  const std::string out = instrument_clock_ticks(source, "k");
  EXPECT_TRUE(contains(out, "static __device__ __forceinline__ void gi_clock_body_k(const float* in, float* out, int n)"))
      << out;
  EXPECT_TRUE(contains(out, "extern \"C\" __global__ void __launch_bounds__(256, 2) k(const float* in, float* out, "
                            "int n, unsigned long long* gi_clock)"))
      << out;
  EXPECT_TRUE(contains(out, "gi_clock_body_k(in, out, n);")) << out;
  // The body loses its launch bounds (they belong to the wrapper now).
  EXPECT_EQ(out.find("__launch_bounds__"), out.rfind("__launch_bounds__"));

  Compiler compiler(std::nullopt);
  CompileRequest r;
  r.source = out;
  const CompileResult c = compiler.compile(r);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

// A template kernel's entry names an instance: the body stays a template,
// the wrapper is one too, and NVRTC instantiates the instance from its name.
TEST(ClockInstrument, ATemplateInstanceAndANamespacedKernelAreInstrumented) {
  const std::string templated =
      "template <typename T, int R>\n"
      "__global__ void box(const T* in, T* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) { T s = 0; for (int k = 0; k < R; ++k) s += in[R * i + k]; out[i] = s; }\n"
      "}\n"
      "template __global__ void box<double, 3>(const double*, double*, int);\n";
  const std::string out = instrument_clock_ticks(templated, "box<double, 3>");
  EXPECT_TRUE(contains(out, "template <typename T, int R>\nstatic __device__ __forceinline__ void gi_clock_body_box(")) << out;
  EXPECT_TRUE(contains(out, "template <typename T, int R>\n__global__ void box(const T* in, T* out, int n, unsigned long long* gi_clock)"))
      << out;
  EXPECT_TRUE(contains(out, "gi_clock_body_box<T, R>(in, out, n);")) << out;
  Compiler compiler(std::nullopt);
  CompileRequest r;
  r.source = out;
  r.name_expressions = {"box<double, 3>"};
  CompileResult c = compiler.compile(r);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;

  // In a namespace (NiftyReg's): the wrapper stays in it, beside the body.
  const std::string namespaced =
      "namespace outer {\nnamespace {\n"
      "__global__ void k(const float* in, float* out, int n) {\n"
      "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = in[i];\n"
      "}\n"
      "}\n}  // namespace outer\n";
  const std::string wrapped = instrument_clock_ticks(namespaced, "k");
  EXPECT_LT(wrapped.find("unsigned long long* gi_clock"), wrapped.find("}  // namespace outer")) << wrapped;
  r = CompileRequest{};
  r.source = wrapped;
  c = compiler.compile(r);
  EXPECT_TRUE(c.ok) << c.error << "\n" << c.log;
}

TEST(ClockInstrument, UnknownEntryOrBrokenSourceIsAnError) {
  EXPECT_THROW(instrument_clock_ticks("__global__ void k() {\n}\n", "other"), std::invalid_argument);
  EXPECT_THROW(instrument_clock_ticks("__global__ void k( {\n", "k"), std::exception);
}

// Every seed of the library can be measured in clock ticks.
TEST(ClockInstrument, EverySeedCompilesInstrumented) {
  Compiler compiler(std::nullopt);
  int seeds = 0;
  for (const auto& dir : gi::test::seed_dirs()) {
    const KernelSpec spec = load_kernel_spec(dir, SpecCheck{false});
    CompileRequest r;
    r.source = instrument_clock_ticks(gi::read_text_file(spec.kernel_path()), spec.entry);
    const CompileResult c = compiler.compile(r);
    EXPECT_TRUE(c.ok) << dir << ": " << c.error << "\n" << c.log;
    ++seeds;
  }
  EXPECT_GE(seeds, 3);
}

}  // namespace

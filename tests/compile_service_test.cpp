// NVRTC compilation, its on-disk cache and parallel batches. NVRTC needs no
// GPU, so all of these run on any machine with the CUDA toolkit.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "fitness/compile/compile_cache.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/compile/ptxas_info.hpp"
#include "fitness/compile/thread_pool.hpp"

namespace {

namespace fs = std::filesystem;
using namespace gi::fitness;

const char* kKernel =
    "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

// Line 3 lacks its semicolon.
const char* kBroken =
    "extern \"C\" __global__ void scale(float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a\n"
    "}\n";

// A fresh cache folder per test, removed afterwards.
class CompileService : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gi-cache-" + std::string(info->name()) + "-" + std::to_string(rd()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CompileRequest request(const std::string& source) const {
    CompileRequest r;
    r.source = source;
    return r;
  }

  fs::path dir_;
};

TEST_F(CompileService, NvrtcVersionLooksLikeMajorMinor) {
  const std::string v = nvrtc_version();
  EXPECT_NE(v.find('.'), std::string::npos) << v;
  EXPECT_NE(v, "unknown");
  EXPECT_FALSE(nvrtc_supported_archs().empty());
}

TEST_F(CompileService, ValidKernelGivesElfCubinAndRegisters) {
  Compiler compiler(dir_);
  const CompileResult r = compiler.compile(request(kKernel));
  ASSERT_TRUE(r.ok) << r.error << "\n" << r.log;
  EXPECT_FALSE(r.cache_hit);
  EXPECT_FALSE(r.is_ptx);
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.begin(), r.cubin.begin() + 4), "\x7f" "ELF");
  EXPECT_GT(r.registers, 0);
  EXPECT_EQ(r.spill_store_bytes, 0);
  EXPECT_EQ(r.spill_load_bytes, 0);
  EXPECT_GE(r.stack_frame_bytes, 0);
  EXPECT_GT(r.compile_seconds, 0.0);
  EXPECT_NE(r.log.find("ptxas info"), std::string::npos) << r.log;
  EXPECT_EQ(r.key, compile_key(request(kKernel)));
  std::cout << "[ info ] NVRTC compile of a small kernel: " << r.compile_seconds << " s\n";
}

TEST_F(CompileService, ComputeArchGivesPtx) {
  Compiler compiler(dir_);
  CompileRequest req = request(kKernel);
  req.arch = "compute_90";
  const CompileResult r = compiler.compile(req);
  ASSERT_TRUE(r.ok) << r.error << "\n" << r.log;
  EXPECT_TRUE(r.is_ptx);
  const std::string text(r.cubin.begin(), r.cubin.end());
  EXPECT_NE(text.find(".entry scale"), std::string::npos);
  EXPECT_EQ(r.registers, -1);  // ptxas did not run
  const CompileResult again = compiler.compile(req);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_TRUE(again.is_ptx);
  EXPECT_EQ(again.cubin, r.cubin);
}

TEST_F(CompileService, SyntaxErrorFailsWithLogNamingTheLine) {
  Compiler compiler(dir_);
  CompileRequest req = request(kBroken);
  req.file_name = "broken.cu";
  const CompileResult r = compiler.compile(req);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_NE(r.log.find("broken.cu(4): error"), std::string::npos) << r.log;
  EXPECT_NE(r.error.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << r.error;
}

TEST_F(CompileService, CompileFailuresAreCachedToo) {
  Compiler compiler(dir_);
  const CompileResult first = compiler.compile(request(kBroken));
  const CompileResult second = compiler.compile(request(kBroken));
  EXPECT_FALSE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.log, first.log);
  EXPECT_EQ(compiler.stats().compiles, 1);
  EXPECT_FALSE(fs::exists(CompileCache(dir_).binary_path(first.key)));
}

TEST_F(CompileService, SecondCompileIsACacheHitWithTheSameBytes) {
  Compiler compiler(dir_);
  const CompileResult first = compiler.compile(request(kKernel));
  ASSERT_TRUE(first.ok) << first.error;
  const CompileResult second = compiler.compile(request(kKernel));
  EXPECT_TRUE(second.cache_hit);
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.registers, first.registers);
  EXPECT_EQ(second.log, first.log);
  EXPECT_EQ(second.key, first.key);
  const Compiler::Stats s = compiler.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);

  // A new compiler (a later run) finds it on disk; the layout is as documented.
  Compiler later(dir_);
  EXPECT_TRUE(later.compile(request(kKernel)).cache_hit);
  EXPECT_EQ(later.stats().compiles, 0);
  EXPECT_TRUE(fs::exists(dir_ / first.key.substr(0, 2) / (first.key + ".json")));
  EXPECT_TRUE(fs::exists(dir_ / first.key.substr(0, 2) / (first.key + ".cubin")));
}

TEST_F(CompileService, WhitespaceOnlyVariantIsACacheHit) {
  Compiler compiler(dir_);
  ASSERT_TRUE(compiler.compile(request(kKernel)).ok);
  std::string reformatted = std::string("\n\n") + kKernel;
  reformatted.replace(reformatted.find("x[i] *= a"), 9, "x[i]   *=   a");
  EXPECT_TRUE(compiler.compile(request(reformatted)).cache_hit);
}

TEST_F(CompileService, NoCacheDirMeansEveryCompileCallsNvrtc) {
  Compiler compiler(std::nullopt);
  EXPECT_FALSE(compiler.compile(request(kKernel)).cache_hit);
  EXPECT_FALSE(compiler.compile(request(kKernel)).cache_hit);
  EXPECT_EQ(compiler.stats().compiles, 2);
}

void overwrite(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST_F(CompileService, CorruptMetadataIsAMissNotACrash) {
  Compiler compiler(dir_);
  const CompileResult first = compiler.compile(request(kKernel));
  ASSERT_TRUE(first.ok);
  overwrite(CompileCache(dir_).json_path(first.key), "{\"format\": 1, \"ok\": tr");
  const CompileResult again = compiler.compile(request(kKernel));
  EXPECT_TRUE(again.ok);
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_EQ(compiler.stats().corrupt_entries, 1);
  EXPECT_NE(compiler.stats().last_cache_problem.find(first.key), std::string::npos);
  // The recompile repaired the entry.
  EXPECT_TRUE(compiler.compile(request(kKernel)).cache_hit);
}

TEST_F(CompileService, TruncatedBinaryIsAMiss) {
  Compiler compiler(dir_);
  const CompileResult first = compiler.compile(request(kKernel));
  ASSERT_TRUE(first.ok);
  overwrite(CompileCache(dir_).binary_path(first.key), "\x7f" "ELF");
  const CacheLookup lookup = CompileCache(dir_).get(first.key);
  EXPECT_FALSE(lookup.result.has_value());
  EXPECT_TRUE(lookup.corrupt);
  EXPECT_FALSE(lookup.problem.empty());
  EXPECT_FALSE(compiler.compile(request(kKernel)).cache_hit);
}

TEST_F(CompileService, CacheRejectsKeysThatAreNotHex) {
  CompileCache cache(dir_);
  std::string error;
  EXPECT_FALSE(cache.put("../evil", request(kKernel), CompileResult{}, &error));
  EXPECT_FALSE(error.empty());
  EXPECT_TRUE(cache.get("../evil").corrupt);
  EXPECT_FALSE(cache.get("ab12").result.has_value());  // absent: a plain miss
  EXPECT_FALSE(cache.get("ab12").corrupt);
}

TEST_F(CompileService, OptionsArchAndFileNameArePartOfTheKey) {
  const CompileRequest base = request(kKernel);
  CompileRequest fast = base;
  fast.options = {"--use_fast_math"};
  CompileRequest other_arch = base;
  other_arch.arch = "sm_80";
  CompileRequest reordered = base;
  reordered.options = {"-lineinfo", "--use_fast_math"};
  CompileRequest ordered = base;
  ordered.options = {"--use_fast_math", "-lineinfo"};
  EXPECT_NE(compile_key(base), compile_key(fast));
  EXPECT_NE(compile_key(base), compile_key(other_arch));
  EXPECT_NE(compile_key(reordered), compile_key(ordered));
  // Options that concatenate to the same text are still different requests.
  CompileRequest split = base;
  split.options = {"-D", "X=1"};
  CompileRequest joined = base;
  joined.options = {"-DX=1"};
  EXPECT_NE(compile_key(split), compile_key(joined));
  CompileRequest renamed = base;
  renamed.file_name = "other.cu";  // it is in the log and in __FILE__
  EXPECT_NE(compile_key(base), compile_key(renamed));

  Compiler compiler(dir_);
  ASSERT_TRUE(compiler.compile(base).ok);
  const CompileResult with_option = compiler.compile(fast);
  EXPECT_TRUE(with_option.ok) << with_option.error;
  EXPECT_FALSE(with_option.cache_hit);
  const CompileResult sm80 = compiler.compile(other_arch);
  EXPECT_TRUE(sm80.ok) << sm80.error;
  EXPECT_FALSE(sm80.cache_hit);
}

TEST_F(CompileService, TargetOptionsAreRefusedWithAClearMessage) {
  Compiler compiler(dir_);
  CompileRequest req = request(kKernel);
  req.options = {"-arch=sm_80"};
  const CompileResult r = compiler.compile(req);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("arch"), std::string::npos) << r.error;
}

TEST_F(CompileService, UnknownArchIsAFailureNotAnException) {
  Compiler compiler(dir_);
  CompileRequest req = request(kKernel);
  req.arch = "sm_1";
  const CompileResult r = compiler.compile(req);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.error.empty());
}

std::string numbered_kernel(int k) {
  return "extern \"C\" __global__ void add" + std::to_string(k) +
         "(float* x) { x[threadIdx.x] += " + std::to_string(k) + ".0f; }\n";
}

TEST_F(CompileService, CompileAllKeepsRequestOrder) {
  std::vector<CompileRequest> requests;
  for (int k = 0; k < 8; ++k) requests.push_back(request(numbered_kernel(k)));
  Compiler compiler(dir_);
  const auto results = compiler.compile_all(requests, 2);
  ASSERT_EQ(results.size(), requests.size());
  for (std::size_t k = 0; k < results.size(); ++k) {
    ASSERT_TRUE(results[k].ok) << results[k].error;
    EXPECT_EQ(results[k].key, compile_key(requests[k]));
    // The cubin names the kernel's own entry point.
    const std::string bytes(results[k].cubin.begin(), results[k].cubin.end());
    EXPECT_NE(bytes.find("add" + std::to_string(k)), std::string::npos) << k;
  }
  EXPECT_EQ(compiler.stats().compiles, 8);
}

TEST_F(CompileService, CompileAllCompilesDuplicatesOnce) {
  std::vector<CompileRequest> requests = {request(numbered_kernel(1)), request(kBroken),
                                          request(numbered_kernel(1)), request(kBroken),
                                          request(std::string("\n") + numbered_kernel(1))};
  Compiler compiler(dir_);
  const auto results = compiler.compile_all(requests, 2);
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(compiler.stats().compiles, 2);
  EXPECT_TRUE(results[0].ok);
  EXPECT_FALSE(results[1].ok);
  EXPECT_TRUE(results[2].cache_hit);
  EXPECT_EQ(results[2].cubin, results[0].cubin);
  EXPECT_FALSE(results[3].ok);
  EXPECT_TRUE(results[4].cache_hit);
}

TEST(PtxasInfo, TakesTheWorstFunction) {
  const PtxasInfo info = parse_ptxas_info(
      "ptxas info    : Function properties for a\n"
      "ptxas         .     512 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers\n"
      "ptxas info    : Function properties for b\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 1 register, used 0 barriers\n");
  EXPECT_EQ(info.registers, 32);
  EXPECT_EQ(info.stack_frame_bytes, 512);
  EXPECT_EQ(info.spill_store_bytes, 8);
  EXPECT_EQ(info.spill_load_bytes, 4);
  EXPECT_EQ(parse_ptxas_info("").registers, -1);
}

TEST(ThreadPool, RunsEveryJobAndKeepsExceptionsInTheFuture) {
  std::atomic<int> ran{0};
  std::vector<std::future<int>> futures;
  std::future<int> failing;
  {
    ThreadPool pool(2);
    EXPECT_EQ(pool.size(), 2);
    for (int i = 0; i < 20; ++i) futures.push_back(pool.submit([i, &ran] {
      ++ran;
      return i * i;
    }));
    failing = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  }  // the destructor finishes queued work
  EXPECT_EQ(ran.load(), 20);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(futures[i].get(), i * i);
  EXPECT_THROW(failing.get(), std::runtime_error);
  EXPECT_EQ(ThreadPool(0).size(), 1);
}

}  // namespace

// Compile servers (`gi nvrtc-serve`, fitness/compile/compile_server.hpp) must give
// exactly what NVRTC in this process gives, report compile errors with their
// log, and survive a server that dies. CPU only.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "fitness/compile/compile_server.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "test_support.hpp"

namespace {

using namespace gi::fitness;
using nlohmann::json;

using gi::test::gi_binary;

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

TEST(CompileServer, GivesTheInProcessCubinAndLog) {
  Compiler here(std::nullopt), served(std::nullopt);
  served.set_compile_servers(gi_binary(), 1);
  for (bool two : {false, true}) {
    here.set_two_stage(two);
    served.set_two_stage(two);
    const CompileResult a = here.compile(request(seed_source(), {"--use_fast_math"}));
    const CompileResult b = served.compile(request(seed_source(), {"--use_fast_math"}));
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_TRUE(b.ok) << b.error << "\n" << b.log;
    EXPECT_EQ(a.cubin, b.cubin) << "two-stage " << two;
    EXPECT_EQ(a.registers, b.registers);
    EXPECT_NE(b.log.find("Used "), std::string::npos) << b.log;
  }
}

// The servers keep NVRTC's automatic precompiled headers for sources that
// include headers (fitness/compile/automatic_pch.hpp): the cubins are the
// ones NVRTC in this process gives without them, and a source that includes
// nothing makes no PCH. (How much faster: bench/, not asserted here.)
// The servers' PCH folders of this process's pools (their scratch folders).
std::vector<std::filesystem::path> pch_folders() {
  std::vector<std::filesystem::path> out;
  const std::string mine = "gi-compile-" + std::to_string(::getpid()) + "-";
  for (const auto& pool : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (pool.path().filename().string().rfind(mine, 0) == 0)
      for (const auto& f : std::filesystem::directory_iterator(pool.path()))
        if (f.path().filename().string().rfind("pch-", 0) == 0) out.push_back(f.path());
  return out;
}

TEST(CompileServer, AutomaticPrecompiledHeadersChangeNoCubin) {
  const auto pch_files = [] {
    std::size_t n = 0;
    for (const auto& folder : pch_folders())
      for (const auto& f : std::filesystem::recursive_directory_iterator(folder)) n += f.path().extension() == ".pch";
    return n;
  };
  Compiler here(std::nullopt), served(std::nullopt);
  served.set_compile_servers(gi_binary(), 1);
  ASSERT_TRUE(served.compile(request(seed_source())).ok);
  EXPECT_EQ(pch_files(), 0u);  // nothing included, nothing precompiled
  for (const char* factor : {"2.0f", "3.0f", "4.0f"}) {
    const std::string source = std::string(
        "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
        "extern \"C\" __global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float v = i < n ? x[i] * ") + factor + " : 0.0f;\n"
        "  v = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), v, cooperative_groups::plus<float>());\n"
        "  if (threadIdx.x % 32 == 0) atomicAdd(y, v);\n}\n";
    const CompileResult a = here.compile(request(source));
    const CompileResult b = served.compile(request(source));
    ASSERT_TRUE(a.ok) << a.error << a.log;
    ASSERT_TRUE(b.ok) << b.error << b.log;
    EXPECT_EQ(a.cubin, b.cubin) << factor;
    EXPECT_EQ(b.log.find("precompiled header"), std::string::npos) << b.log;  // --pch-messages=false
  }
  EXPECT_GE(pch_files(), 1u);  // the headers' parse was kept for the next compiles
  // A PCH folder removed under a running server (a temp cleaner) is made again.
  for (const auto& folder : pch_folders()) std::filesystem::remove_all(folder);
  EXPECT_EQ(pch_files(), 0u);
  const std::string again = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                            "extern \"C\" __global__ void k(float* y) {\n"
                            "  y[0] = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), y[threadIdx.x], "
                            "cooperative_groups::plus<float>());\n}\n";
  const CompileResult a = here.compile(request(again));
  const CompileResult b = served.compile(request(again));
  ASSERT_TRUE(b.ok) << b.error << b.log;
  EXPECT_EQ(a.cubin, b.cubin);
}

TEST(CompileServer, CompileErrorsComeBackWithTheirLog) {
  Compiler served(std::nullopt);
  served.set_compile_servers(gi_binary(), 1);
  std::string broken = seed_source();
  broken.replace(broken.find("u3 = u2 * u;"), 12, "u3 = u2 * ;");
  const CompileResult r = served.compile(request(broken));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("nvrtcCompileProgram"), std::string::npos) << r.error;
  EXPECT_NE(r.log.find("expected an expression"), std::string::npos) << r.log;
  // The server is still there for the next compile.
  EXPECT_TRUE(served.compile(request(seed_source())).ok);
}

TEST(CompileServer, AMissingServerBinaryIsAnErrorNotACrash) {
  CompileServerPool pool("/nonexistent/gi", 1);
  const NvrtcOutput r = pool.compile(request(seed_source()), "sm_90", {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("/nonexistent/gi"), std::string::npos) << r.error;
}

TEST(CompileServer, SmallOutputsArriveWhole) {
  CompileRequest r;
  r.source = "extern \"C\" __global__ void one(float* x) { x[threadIdx.x] = 1.0f; }\n";
  r.arch = "compute_90";
  Compiler here(std::nullopt), served(std::nullopt);
  served.set_compile_servers(gi_binary(), 1);
  const CompileResult a = here.compile(r);
  const CompileResult b = served.compile(r);
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_LT(a.cubin.size(), 4096u);
  EXPECT_EQ(a.cubin, b.cubin);
}

TEST(CompileServer, AKilledServerIsReplacedAndTheCompileStillSucceeds) {
  CompileServerPool pool(gi_binary(), 1);
  ASSERT_TRUE(pool.compile(request(seed_source()), "compute_90", {}).ok);
  const auto pids = pool.pids();
  ASSERT_EQ(pids.size(), 1u);
  ASSERT_EQ(::kill(pids[0], SIGKILL), 0);
  const NvrtcOutput r = pool.compile(request(seed_source()), "compute_90", {});
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(pool.restarts(), 1);
  ASSERT_EQ(pool.pids().size(), 1u);
  EXPECT_NE(pool.pids()[0], pids[0]);
}

TEST(CompileServer, ManyThreadsShareFewServers) {
  // Six distinct variants on four threads over two servers: every one
  // compiles, and the pool never runs more than two processes.
  Compiler served(std::nullopt);
  served.set_compile_servers(gi_binary(), 2);
  std::vector<CompileRequest> requests;
  for (int i = 0; i < 6; ++i)
    requests.push_back(request(seed_source() + "\n// variant " + std::to_string(i) + "\n__device__ int v" +
                               std::to_string(i) + ";\n"));
  const auto results = served.compile_all(requests, 4);
  ASSERT_EQ(results.size(), 6u);
  for (const auto& r : results) EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(served.stats().compiles, 6);
}

TEST(CompileServer, AnswersBadRequestsWithAnError) {
  std::stringstream in;
  in << json{{"cmd", "compile"}, {"source", "x"}}.dump() << "\n"
     << json{{"cmd", "frobnicate"}}.dump() << "\n"
     << "not json\n"
     << json{{"cmd", "ping"}}.dump() << "\n";
  std::stringstream out;
  EXPECT_EQ(run_compile_server_loop(in, out), 0);
  std::vector<json> replies;
  for (std::string line; std::getline(out, line);) replies.push_back(json::parse(line));
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[0]["status"], "error");
  EXPECT_NE(replies[0]["message"].get<std::string>().find("file_name"), std::string::npos) << replies[0];
  EXPECT_EQ(replies[1]["status"], "error");
  EXPECT_NE(replies[1]["message"].get<std::string>().find("frobnicate"), std::string::npos);
  EXPECT_EQ(replies[2]["status"], "error");
  EXPECT_EQ(replies[3]["status"], "ok");
}

TEST(CompileServer, BytesThatAreNotUtf8DoNotEndTheServer) {
  // A comment with a stray byte: the log and request must still travel.
  CompileServerPool pool(gi_binary(), 1);
  const std::string source = "// caf\xe9\nextern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }\n";
  const NvrtcOutput r = pool.compile(request(source), "compute_90", {});
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(pool.restarts(), 0);
}

}  // namespace

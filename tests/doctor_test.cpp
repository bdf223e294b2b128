// Runs the built `gi doctor` as a user would: it must work with or without a
// GPU and say which case it is in.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace {

using gi::test::CommandOutput;
using gi::test::run_gi;

TEST(Doctor, ReportsNvrtcAndGpusOrTheirAbsence) {
  const CommandOutput r = run_gi("doctor");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NVRTC"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NVRTC test:    ok"), std::string::npos) << r.output;
  const bool gpu = r.output.find("GPU 0:") != std::string::npos;
  const bool none = r.output.find("no CUDA device") != std::string::npos;
  EXPECT_TRUE(gpu != none) << r.output;
}

TEST(Doctor, JsonIsOneObjectWithTheSameFacts) {
  const CommandOutput r = run_gi("doctor --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.output)) << r.output;
  EXPECT_FALSE(j.at("nvrtc").at("version").get<std::string>().empty());
  EXPECT_FALSE(j.at("nvrtc").at("archs").empty());
  EXPECT_TRUE(j.at("nvrtc").at("self_test").at("ok").get<bool>());
  const auto& cuda = j.at("cuda");
  if (cuda.at("driver_ok").get<bool>()) {
    EXPECT_FALSE(cuda.at("gpus").empty());
  } else {
    EXPECT_NE(cuda.at("message").get<std::string>().find("no CUDA device"), std::string::npos);
  }
}

TEST(Doctor, HelpDescribesTheCommand) {
  const CommandOutput r = run_gi("doctor --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--json"), std::string::npos) << r.output;
}

}  // namespace

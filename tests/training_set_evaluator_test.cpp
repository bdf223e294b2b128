// The GPU evaluator's training set without a GPU: the worker is the stand-in
// of tests/fake_worker.hpp, so what the evaluator asks of it (every training
// workload loaded into a slot each generation, every slot checked with its
// own geometry and the timed one first, the old data freed, everything
// replayed after a crash) and what it makes of the answers (the failing
// workload and its purpose) are checked here. NVRTC compiles the seed (no GPU
// needed); a small trilinear spec keeps the workloads tiny.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/evaluate/gpu_evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string test_worker_path() {
  const char* env = std::getenv("GI_TEST_WORKER");
  return env && *env ? env : GI_TEST_WORKER;
}

const fs::path& seed_dir() {
  static const fs::path dir = gi::test::source_dir() / "seeds/resampling/trilinear";
  return dir;
}

// The trilinear spec with a tiny timed workload and two checks: the seed's
// first border check and a tiny odd image.
gi::fitness::KernelSpec small_spec() {
  json j = json::parse(std::ifstream(seed_dir() / "spec.json"));
  j["workloads"]["train"]["variables"] = {{"dim", {20, 18, 16}}, {"mask", "full"}};
  const json seed_checks = j["workloads"].value("train_checks", json::array());
  if (seed_checks.empty()) throw std::runtime_error("the trilinear spec has no train_checks");
  json checks = json::array({seed_checks.at(0)});
  checks.push_back({{"generator", "trilinear_brain"},
                    {"variables", {{"dim", {9, 7, 5}}, {"mask", "full"}, {"amplitude", 1}}},
                    {"purpose", "a tiny odd image"}});
  j["workloads"]["train_checks"] = checks;
  // Held-out workloads as small as the rest (the spec asks for five).
  j["workloads"]["validate"] = json::array();
  for (int i = 0; i < 5; ++i)
    j["workloads"]["validate"].push_back(
        {{"generator", "trilinear_brain"}, {"seed", 100 + i}, {"variables", {{"dim", {11 + i, 9, 7}}, {"mask", "full"}}}});
  return gi::fitness::parse_kernel_spec(j, "small trilinear spec.json", gi::read_text_file(seed_dir() / "kernel.cu"),
                                        "kernel.cu");
}

class TrainingSetEvaluator : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = new fs::path(fs::temp_directory_path() / ("gi-training-set-" + std::to_string(::getpid())));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*cache_);
    delete cache_;
  }
  void SetUp() override {
    dir_ = *cache_ / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    gi::GpuEvaluatorConfig c;
    c.worker_executable = test_worker_path();
    c.worker_args = {"--fake", dir_.string()};
    c.cache_dir = *cache_ / "cache";  // shared: the seed compiles once
    c.jobs = 2;
    c.compile_processes = false;
    c.two_stage_compile = false;
    c.arch = "sm_90";  // no device to ask: the fake worker runs nothing
    evaluator_ = std::make_unique<gi::GpuEvaluator>(seed_, spec_, c);
  }
  void TearDown() override { evaluator_.reset(); }

  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream in(dir_ / "requests.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  // "load_plan train", "eval train,train:1,train:2", "unload validate:1".
  std::vector<std::string> seen() const {
    std::vector<std::string> out;
    for (const json& r : requests()) {
      std::string s = r.value("cmd", "");
      if (r.contains("slot")) s += " " + r["slot"].get<std::string>();
      if (r.contains("slots")) {
        s += " ";
        for (std::size_t i = 0; i < r["slots"].size(); ++i) s += (i ? "," : "") + r["slots"][i]["slot"].get<std::string>();
      }
      out.push_back(s);
    }
    return out;
  }
  void script(const json& j) const { std::ofstream(dir_ / "script.json") << j.dump(); }
  gi::Evaluation evaluate_seed() { return evaluator_->evaluate({gi::grammar::Patch{}}).at(0); }

  static inline fs::path* cache_ = nullptr;
  gi::Seed seed_ = gi::load_seed(seed_dir());
  gi::fitness::KernelSpec spec_ = small_spec();
  fs::path dir_;
  std::unique_ptr<gi::GpuEvaluator> evaluator_;
};

TEST_F(TrainingSetEvaluator, EveryTrainingWorkloadIsCheckedWithItsOwnGeometryAndTheFirstIsTimed) {
  evaluator_->begin_generation(0, 5);
  EXPECT_EQ(evaluator_->workload_names(), (std::vector<std::string>{"train", "train:1", "train:2"}));
  const gi::Evaluation e = evaluate_seed();
  ASSERT_TRUE(e.valid()) << gi::to_string(e.status) << ": " << e.message;
  EXPECT_EQ(e.median_ms, 1.0);
  EXPECT_EQ(e.failed_workload, "");
  EXPECT_EQ(seen(), (std::vector<std::string>{"load_plan train", "load_plan train:1", "load_plan train:2",
                                              "eval train,train:1,train:2"}));
  const json eval = requests().back();
  EXPECT_EQ(eval["time_slot"], "train");
  // Full masks: one thread per voxel, 128 threads a block (the spec's default).
  const std::vector<unsigned> voxels = {20 * 18 * 16, 23 * 19 * 17, 9 * 7 * 5};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(eval["slots"][i]["block"], json({128, 1, 1}));
    EXPECT_EQ(eval["slots"][i]["grid"], json({(voxels[i] + 127) / 128, 1, 1}));
    EXPECT_EQ(eval["slots"][i]["shared_bytes"], 0);
  }
  // The geometry follows the tuning's block size.
  gi::Tuning t;
  t.block_size = 64;
  evaluator_->set_tuning(t);
  ASSERT_TRUE(evaluate_seed().valid());
  EXPECT_EQ(requests().back()["slots"][2]["grid"], json({(voxels[2] + 63) / 64, 1, 1}));
}

TEST_F(TrainingSetEvaluator, TheFirstFailureNamesTheWorkloadAndItsPurpose) {
  evaluator_->begin_generation(0, 5);
  script({{"fail_slot", "train:1"}, {"status", "wrong_output"}, {"message", "buffer 'warpedImage' element 7: got nan"}});
  const gi::Evaluation e = evaluate_seed();
  EXPECT_EQ(e.status, gi::EvalStatus::WrongOutput);
  EXPECT_EQ(e.failed_workload, "train:1");
  EXPECT_EQ(e.message, "train:1 (" + spec_.train_checks[0].purpose +
                           "): wrong output: buffer 'warpedImage' element 7: got nan");
  // Logged with the evaluation, so failures can be counted per workload.
  const json j = gi::to_json(e);
  EXPECT_EQ(j["failed_workload"], "train:1");
  EXPECT_EQ(gi::evaluation_from_json(j).failed_workload, "train:1");
  EXPECT_FALSE(gi::to_json(gi::Evaluation{}).contains("failed_workload"));

  script({{"fail_slot", "train"}, {"status", "illegal_address"}, {"message", "checked run: illegal address"}});
  const gi::Evaluation timed = evaluate_seed();
  EXPECT_EQ(timed.status, gi::EvalStatus::IllegalAddress);
  EXPECT_EQ(timed.failed_workload, "train");
  EXPECT_EQ(timed.message, "train (timed workload): illegal address: checked run: illegal address");
}

TEST_F(TrainingSetEvaluator, EachGenerationLoadsFreshDataAndRemovesTheOldFiles) {
  evaluator_->begin_generation(0, 5);
  evaluator_->prefetch_generation(1, 6);
  std::vector<fs::path> first;
  for (const json& r : requests()) first.push_back(r["plan_file"].get<std::string>());
  ASSERT_EQ(first.size(), 3u);
  for (const fs::path& f : first) EXPECT_TRUE(fs::exists(f)) << f;
  const std::string first_train = gi::read_text_file(first[0]);
  evaluator_->begin_generation(1, 6);
  const auto all = requests();
  ASSERT_EQ(all.size(), 6u);
  for (std::size_t i = 3; i < 6; ++i) {
    const fs::path f = all[i]["plan_file"].get<std::string>();
    EXPECT_EQ(all[i]["slot"], all[i - 3]["slot"]);
    EXPECT_NE(f, first[i - 3]) << "a plan file the worker may replay was overwritten";
    EXPECT_TRUE(fs::exists(f)) << f;
    EXPECT_FALSE(fs::exists(first[i - 3])) << first[i - 3];
  }
  // Fresh data: another generator seed gives other inputs.
  EXPECT_NE(gi::read_text_file(all[3]["plan_file"].get<std::string>()), first_train);
  EXPECT_TRUE(evaluate_seed().valid());
}

TEST_F(TrainingSetEvaluator, OneWorkloadAloneReplacesTheSetAndIsBothCheckedAndTimed) {
  evaluator_->begin_generation(0, 5);
  evaluator_->use_workload("validate:1", 0);
  EXPECT_EQ(evaluator_->workload_names(), (std::vector<std::string>{"validate:1"}));
  ASSERT_TRUE(evaluate_seed().valid());
  evaluator_->use_workload("train", 9);
  ASSERT_TRUE(evaluate_seed().valid());
  EXPECT_EQ(seen(), (std::vector<std::string>{"load_plan train", "load_plan train:1", "load_plan train:2",
                                              "load_plan validate:1", "unload train", "unload train:1",
                                              "unload train:2", "eval validate:1", "load_plan train",
                                              "load_plan train:1", "load_plan train:2", "unload validate:1",
                                              "eval train,train:1,train:2"}));
  const auto all = requests();
  EXPECT_EQ(all[7]["time_slot"], "validate:1");
}

TEST_F(TrainingSetEvaluator, AWorkerThatDiesIsRestartedWithTheWholeSet) {
  evaluator_->begin_generation(0, 5);
  std::ofstream(dir_ / "crash_next_eval") << "\n";
  const gi::Evaluation lost = evaluate_seed();
  EXPECT_FALSE(lost.valid());
  EXPECT_EQ(lost.failed_workload, "");  // no reply names one
  const gi::Evaluation again = evaluate_seed();
  EXPECT_TRUE(again.valid()) << again.message;
  EXPECT_EQ(evaluator_->stats().worker_restarts, 1);
  EXPECT_EQ(seen(), (std::vector<std::string>{"load_plan train", "load_plan train:1", "load_plan train:2",
                                              "eval train,train:1,train:2", "load_plan train", "load_plan train:1",
                                              "load_plan train:2", "eval train,train:1,train:2"}));
}

TEST_F(TrainingSetEvaluator, AnUnknownWorkloadIsAnErrorNamingTheSpec) {
  try {
    evaluator_->use_workload("validate:99", 0);
    FAIL() << "accepted validate:99";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("small trilinear spec.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(evaluate_seed(), std::logic_error);  // nothing loaded
}

// Two GPUs, one fake worker each (tests/fake_worker.hpp); the second GPU is
// twice as slow. Every worker gets the training set, the seed is timed on
// each, the batch's binaries are shared out, and each time is expressed on
// the first GPU's scale through its own GPU's seed time.
TEST_F(TrainingSetEvaluator, SeveralGpusShareABatchAndEachTimeIsScaledByItsOwnGpusSeed) {
  evaluator_.reset();
  gi::GpuEvaluatorConfig c;
  c.worker_executable = test_worker_path();
  c.worker_args = {"--fake", (dir_ / "gpu{device}").string()};
  c.devices = {0, 1};
  c.cache_dir = *cache_ / "cache";
  c.jobs = 2;
  c.compile_processes = false;
  c.two_stage_compile = false;
  c.arch = "sm_90";
  for (int d : {0, 1}) fs::create_directories(dir_ / ("gpu" + std::to_string(d)));
  std::ofstream(dir_ / "gpu0/script.json") << json{{"time_ms", 1.0}, {"delay_ms", 60}}.dump();
  std::ofstream(dir_ / "gpu1/script.json") << json{{"time_ms", 2.0}, {"delay_ms", 60}}.dump();
  gi::GpuEvaluator evaluator(seed_, spec_, c);
  evaluator.begin_generation(0, 5);
  // Launch bounds change the binary: four distinct binaries and the seed.
  std::vector<gi::grammar::Patch> batch{gi::grammar::Patch{}};
  for (const char* p : {"launch_bounds:128,1", "launch_bounds:128,4", "launch_bounds:256,2", "launch_bounds:64,8"})
    batch.push_back(gi::grammar::parse_patch(p));
  const auto results = evaluator.evaluate(batch);
  ASSERT_EQ(results.size(), batch.size());
  std::map<int, int> measured_on;
  for (const gi::Evaluation& e : results) {
    ASSERT_TRUE(e.valid()) << e.message;
    if (e.same_binary) continue;
    ASSERT_TRUE(e.device == 0 || e.device == 1) << e.device;
    ++measured_on[e.device];
    EXPECT_DOUBLE_EQ(e.device_median_ms, e.device == 0 ? 1.0 : 2.0);
    EXPECT_DOUBLE_EQ(e.median_ms, 1.0);  // 2.0 ms on GPU 1, whose seed takes 2.0 ms there and 1.0 ms on GPU 0
    const json j = gi::to_json(e);
    EXPECT_EQ(gi::evaluation_from_json(j).device, e.device);
    EXPECT_DOUBLE_EQ(gi::evaluation_from_json(j).device_median_ms, e.device_median_ms);
  }
  EXPECT_GE(measured_on[0], 1);
  EXPECT_GE(measured_on[1], 1);
  // Each worker: the whole training set, the seed, then its share of the batch.
  for (int d : {0, 1}) {
    std::vector<std::string> lines;
    std::ifstream in(dir_ / ("gpu" + std::to_string(d)) / "requests.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line).value("cmd", ""));
    ASSERT_GE(lines.size(), 5u) << d;
    EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + 4),
              (std::vector<std::string>{"load_plan", "load_plan", "load_plan", "eval"}))
        << d;
  }
  EXPECT_EQ(evaluator.stats().measured + evaluator.stats().binary_reuses, 5);
  // A single-GPU evaluation carries no device (its logs stay as they were).
  EXPECT_FALSE(gi::to_json(gi::Evaluation{}).contains("device"));
}

TEST(VariantLaunchGeometry, ComesFromTheSpecsLaunchExpressions) {
  const gi::fitness::KernelSpec spec = small_spec();
  const gi::LaunchGeometry g = gi::variant_launch_geometry(spec, {{"activeVoxelNumber", 1000}}, 128);
  EXPECT_EQ(g.block, (std::array<unsigned, 3>{128, 1, 1}));
  EXPECT_EQ(g.grid, (std::array<unsigned, 3>{8, 1, 1}));
  EXPECT_EQ(g.shared_bytes, 0u);
  EXPECT_EQ(gi::variant_launch_geometry(spec, {{"activeVoxelNumber", 1000}}, 0).block[0], spec.default_block_size);
  try {
    gi::variant_launch_geometry(spec, {}, 128);
    FAIL() << "no variables, yet a geometry";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("launch.grid[0]"), std::string::npos) << e.what();
  }
}

}  // namespace

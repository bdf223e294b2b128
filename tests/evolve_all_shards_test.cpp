// gi evolve-all over several processes that share one folder (gi/run/shard.hpp,
// gi/run/folder_lock.hpp), on the stand-in evaluator: shards running at once
// write byte for byte what one process writes; a shard that dies loses only
// its own kernel's generation in flight, and the restarted job repeats
// nothing; two MPI ranks (mpirun, Open MPI) reproduce one process.
#include <gtest/gtest.h>

#include <unistd.h>

#include <thread>

#include "fitness/gpu/cuda_devices.hpp"
#include "fitness/process/subprocess.hpp"
#include "stand_in_evolve_all.hpp"
#include "stand_in_results.hpp"
#include "test_support.hpp"

namespace gi {
namespace {
namespace fs = std::filesystem;

struct EvolveAllShards : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("gi_evolve_all_shards_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::remove_all(dir); }
  void TearDown() override { fs::remove_all(dir); }

  EvolveAllOptions options(const fs::path& root, Shard shard = {}) {
    EvolveAllOptions o = test::stand_in_options(root, test::source_dir() / "seeds");
    o.shard = shard;
    return o;
  }
  // One shard's call; interrupted (as a killed rank) after that many evaluations, < 0: never.
  static bool call(const EvolveAllOptions& o, long evaluations_before_stop) {
    test::Interrupter interrupter{evaluations_before_stop};
    try {
      evolve_all(o, [&](const EvolveOptions& run) {
        return test::stand_in_backend(run, interrupter, test::kStandInBroken, test::kStandInRejected);
      });
      return true;
    } catch (const test::Interrupted&) {
      return false;
    }
  }
  static void expect_same_results(const fs::path& one, const fs::path& sharded) {
    test::expect_same_results(one, sharded, "the sharded run");
  }
};

TEST_F(EvolveAllShards, ShardsRunningAtOnceWriteWhatOneProcessWrites) {
  ASSERT_TRUE(call(options(dir / "one"), -1));
  // Three processes of one job (threads here: each takes the folder's lock
  // through its own open file, as processes do).
  std::vector<std::thread> ranks;
  std::vector<int> finished(3, 0);
  for (int r = 0; r < 3; ++r)
    ranks.emplace_back([&, r] { finished[r] = call(options(dir / "three", Shard{r, 3, "test"}), -1); });
  for (auto& t : ranks) t.join();
  EXPECT_EQ(finished, std::vector<int>({1, 1, 1}));
  expect_same_results(dir / "one", dir / "three");
}

TEST_F(EvolveAllShards, ARankThatDiesLosesOnlyItsOwnKernelAndTheRestartedJobRepeatsNothing) {
  ASSERT_TRUE(call(options(dir / "one"), -1));
  // Shard 1 of 2 (library order: intensity_minmax, rejected at publication,
  // then sum_reduction) dies part way through its second kernel while shard 0
  // goes on. The cut is the first that leaves its first kernel recorded and
  // its second started.
  std::map<std::string, std::string> status;
  auto read_status = [&] {
    status.clear();
    const nlohmann::json plan = nlohmann::json::parse(read_text_file(dir / "job/out/evolve_all.json"));
    for (const auto& k : plan.at("kernels")) status[k.at("kernel")] = k.at("status");
  };
  long cut = 20;
  for (;; cut += 20) {
    ASSERT_LT(cut, 4000) << "shard 1 never reached its second kernel";
    fs::remove_all(dir / "job");
    std::thread rank0([&] { EXPECT_TRUE(call(options(dir / "job", Shard{0, 2, "test"}), -1)); });
    const bool rank1_finished = call(options(dir / "job", Shard{1, 2, "test"}), cut);
    rank0.join();
    ASSERT_FALSE(rank1_finished);
    read_status();
    if (status.at("tools/sum_reduction") == "running" && fs::exists(dir / "job/out/tools-sum_reduction/generations.jsonl"))
      break;
  }
  EXPECT_EQ(status.at("similarity/ssd_gradient"), "complete");  // shard 0's kernels: done
  EXPECT_EQ(status.at("tools/max_vector_length"), "failed");
  EXPECT_EQ(status.at("tools/intensity_minmax"), "rejected");   // shard 1's first: recorded before it died
  // The engine stopped the job; a restarted job runs both shards again.
  std::thread again0([&] { EXPECT_TRUE(call(options(dir / "job", Shard{0, 2, "test"}), -1)); });
  EXPECT_TRUE(call(options(dir / "job", Shard{1, 2, "test"}), -1));
  again0.join();
  expect_same_results(dir / "one", dir / "job");
}

// The CI machine has Open MPI (scripts/setup.sh installs openmpi-bin): a
// missing mpirun fails this test rather than skipping it.
TEST_F(EvolveAllShards, TwoMpiRanksWriteWhatOneProcessWrites) {
  const std::string seeds = (test::source_dir() / "seeds").string();
  fs::create_directories(dir);
  const fitness::SubprocessResult one =
      fitness::run_subprocess({GI_STAND_IN_EVOLVE_ALL, seeds, (dir / "one").string()}, dir / "one.log");
  ASSERT_EQ(one.exit_code, 0) << one.problem << one.output;
  // Open MPI refuses root unless told; CI runs as root. Without ssh or rsh
  // on the machine its launcher will not start even for local ranks, unless
  // it is given an agent it then never calls.
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMPI_MCA_plm_rsh_agent", "false", 0);
  // run_subprocess takes a path, not a name to look up in PATH.
  std::string mpirun = "mpirun";
  if (const char* path = std::getenv("PATH"))
    for (std::string rest = path; !rest.empty();) {
      const std::string d = rest.substr(0, rest.find(':'));
      rest = rest.find(':') == std::string::npos ? "" : rest.substr(rest.find(':') + 1);
      if (!d.empty() && ::access((fs::path(d) / "mpirun").c_str(), X_OK) == 0) {
        mpirun = (fs::path(d) / "mpirun").string();
        break;
      }
    }
  const fitness::SubprocessResult mpi = fitness::run_subprocess(
      {mpirun, "-n", "2", "--oversubscribe", GI_STAND_IN_EVOLVE_ALL, seeds, (dir / "mpi").string()}, dir / "mpi.log");
  ASSERT_EQ(mpi.exit_code, 0) << "mpirun (Open MPI, Debian's openmpi-bin) is needed: " << mpi.problem << mpi.output;
  EXPECT_NE(mpi.output.find("shard 0/2 (OMPI_COMM_WORLD_RANK)"), std::string::npos) << mpi.output;
  EXPECT_NE(mpi.output.find("shard 1/2 (OMPI_COMM_WORLD_RANK)"), std::string::npos) << mpi.output;
  fs::remove(dir / "one.log");
  fs::remove(dir / "mpi.log");
  expect_same_results(dir / "one", dir / "mpi");
}

// `gi evolve-all --gpus 0,1` starts one child per device, each a shard of
// the same folder with the options given. Without a GPU each child records
// its kernel as failed ("no CUDA device ... device N"), which shows which
// device it was given; on a GPU machine it would evolve for real.
TEST_F(EvolveAllShards, OneChildPerDeviceWithTheGivenOptions) {
  if (!fitness::probe_cuda().gpus.empty()) GTEST_SKIP() << "needs a machine without a GPU (it would evolve for real)";
  fs::create_directories(dir);
  const fitness::SubprocessResult r = fitness::run_subprocess(
      {test::gi_binary(), "evolve-all", "--gpus", "0,1", "--kernels", "tools/sum_reduction,tools/max_vector_length", "--out",
       (dir / "out").string(), "--population", "5", "--generations", "2", "--quiet", "--seeds",
       (test::source_dir() / "seeds").string(), "--cache", (dir / "cache").string(), "--evolved-dir",
       (dir / "evolved").string()},
      dir / "log");
  EXPECT_EQ(r.exit_code, 0) << r.problem << r.output;
  EXPECT_NE(r.output.find("[evolve-all] 2 GPUs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[evolve-all 1/2] this process takes kernels 1, 3,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[evolve-all 2/2] this process takes kernels 2, 4,"), std::string::npos) << r.output;
  const nlohmann::json plan = nlohmann::json::parse(read_text_file(dir / "out/evolve_all.json"));
  EXPECT_EQ(plan.at("plan").at("search").at("population"), 5);
  EXPECT_EQ(plan.at("plan").at("search").at("generations"), 2);
  ASSERT_EQ(plan.at("kernels").size(), 2u);
  // Library order: max_vector_length (shard 1/2, device 0), sum_reduction (2/2, device 1).
  EXPECT_EQ(plan.at("kernels")[0].at("status"), "failed");
  EXPECT_NE(plan.at("kernels")[0].at("error").get<std::string>().find("device 0"), std::string::npos) << plan.dump(2);
  EXPECT_NE(plan.at("kernels")[1].at("error").get<std::string>().find("device 1"), std::string::npos) << plan.dump(2);
}

// `gi evolve --gpus 2,3`: the run's config names the GPUs its evaluator
// measures on; the first is its device (validation, comparison, versions).
TEST_F(EvolveAllShards, ARunOnSeveralGpusKeepsThemInItsConfig) {
  EvolveOptions o;
  o.seed_dir = test::source_dir() / "seeds/tools/sum_reduction";
  o.run_dir = dir / "run";
  o.search.population = 4;
  o.search.generations = 1;
  o.search.data_every = 1;
  o.devices = {2, 3};
  o.quiet = true;
  o.evolved_root = dir / "evolved";
  test::Interrupter never;
  nlohmann::json seen;
  RunBackend b = test::stand_in_backend(o, never, "", "");
  const auto make = b.make_evaluator;
  b.make_evaluator = [&](const Seed& seed, const fitness::KernelSpec& spec, const nlohmann::json& config) {
    seen = config;
    return make(seed, spec, config);
  };
  EXPECT_EQ(evolve(o, b), RunOutcome::Complete);
  EXPECT_EQ(seen.at("devices"), nlohmann::json({2, 3}));
  EXPECT_EQ(seen.at("device"), 2);
}

TEST_F(EvolveAllShards, GpusAndAShardAreOneOrTheOther) {
  fs::create_directories(dir);
  const fitness::SubprocessResult r = fitness::run_subprocess(
      {test::gi_binary(), "evolve-all", "--gpus", "0,1", "--shard", "0/2", "--out", (dir / "out").string()}, dir / "log");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--gpus: this process is a shard already"), std::string::npos) << r.output;
  const fitness::SubprocessResult bad = fitness::run_subprocess(
      {test::gi_binary(), "evolve-all", "--gpus", "0,x", "--out", (dir / "out").string()}, dir / "log");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--gpus: expected 'all' or device numbers"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace gi

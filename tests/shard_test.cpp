// gi/run/shard.hpp: a shard from --shard or from the launcher's variables
// (Open MPI, PMI, srun, Slurm job arrays), and kernels dealt out by index.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "gi/run/shard.hpp"

namespace gi {
namespace {

// An environment of the given variables only.
GetEnv env(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    const auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

TEST(Shard, ParsedFromIOverN) {
  const Shard s = parse_shard("1/3");
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.label(), "2/3");
  EXPECT_FALSE(s.takes(0));
  EXPECT_TRUE(s.takes(1));
  EXPECT_TRUE(s.takes(4));
  for (const char* bad : {"3/3", "-1/2", "1", "a/2", "1/0", "1/2/3", "/2", "1/"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, EveryKernelGoesToExactlyOneShard) {
  for (int count = 1; count <= 5; ++count)
    for (int kernel = 0; kernel < 38; ++kernel) {
      int takers = 0;
      for (int i = 0; i < count; ++i) takers += Shard{i, count, "t"}.takes(kernel);
      EXPECT_EQ(takers, 1) << kernel << " of " << count;
    }
}

TEST(Shard, FromTheLaunchersVariables) {
  EXPECT_FALSE(shard_from_environment(env({})).has_value());
  // One rank is no sharding at all.
  EXPECT_FALSE(shard_from_environment(env({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}})).has_value());
  auto s = shard_from_environment(env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->count, 2);
  EXPECT_EQ(s->source, "OMPI_COMM_WORLD_RANK");
  // Open MPI's variables win over Slurm's, which mpirun inside an allocation also sees.
  s = shard_from_environment(env({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                                  {"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  s = shard_from_environment(env({{"PMI_RANK", "3"}, {"PMI_SIZE", "5"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count, 5);
  s = shard_from_environment(env({{"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "2"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 1);
  // A batch script outside srun sees SLURM_NTASKS of its allocation: not a shard.
  EXPECT_FALSE(shard_from_environment(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}})).has_value());
}

TEST(Shard, AJobArrayTimesItsTasksRanks) {
  auto s = shard_from_environment(
      env({{"SLURM_ARRAY_TASK_ID", "12"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  // Array task 2 of 4, rank 1 of 2 in it: shard 5 of 8.
  s = shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"},
                                  {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "2"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 5);
  EXPECT_EQ(s->count, 8);
  // A stepped array leaves indices no task can fill: named.
  try {
    shard_from_environment(env({{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
    FAIL() << "a task outside the range was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_ARRAY_TASK_ID=8"), std::string::npos) << e.what();
  }
}

TEST(Shard, ABadVariableIsNamed) {
  for (const auto& vars : std::vector<std::map<std::string, std::string>>{
           {{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}},
           {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}}) {
    try {
      shard_from_environment(env(vars));
      ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_RANK"), std::string::npos) << e.what();
    }
  }
}

TEST(Shard, TheLocalRankPicksTheGpu) {
  EXPECT_FALSE(local_rank_from_environment(env({})).has_value());
  EXPECT_EQ(local_rank_from_environment(env({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}})), 3);
  EXPECT_EQ(local_rank_from_environment(env({{"SLURM_LOCALID", "1"}})), 1);
}

}  // namespace
}  // namespace gi

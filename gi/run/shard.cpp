#include "gi/run/shard.hpp"

#include <cstdlib>
#include <stdexcept>

namespace gi {

namespace {

// A whole number in [0, limit) from `text`; `what` names it in the error.
int whole_number(const std::string& text, const std::string& what, long limit = 1L << 30) {
  std::size_t used = 0;
  long v = -1;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < 0 || v >= limit)
    throw std::runtime_error(what + ": expected a whole number" +
                             (limit < (1L << 30) ? " below " + std::to_string(limit) : std::string()) + ", got '" +
                             text + "'");
  return static_cast<int>(v);
}

std::optional<int> number_variable(const GetEnv& getenv, const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return whole_number(v, name);
}

// The launcher's rank and size, from the first launcher whose variables are set.
std::optional<Shard> launcher_rank(const GetEnv& getenv) {
  static const char* const kPairs[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                          {"PMI_RANK", "PMI_SIZE"},
                                          {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS"}};
  for (const auto& pair : kPairs) {
    const auto rank = number_variable(getenv, pair[0]);
    const auto size = number_variable(getenv, pair[1]);
    if (!rank || !size) continue;
    if (*size < 1 || *rank >= *size)
      throw std::runtime_error(std::string(pair[0]) + "=" + std::to_string(*rank) + " is not below " + pair[1] + "=" +
                               std::to_string(*size));
    return Shard{*rank, *size, pair[0]};
  }
  return std::nullopt;
}

std::optional<Shard> array_task(const GetEnv& getenv) {
  const auto id = number_variable(getenv, "SLURM_ARRAY_TASK_ID");
  const auto count = number_variable(getenv, "SLURM_ARRAY_TASK_COUNT");
  if (!id || !count) return std::nullopt;
  const int first = number_variable(getenv, "SLURM_ARRAY_TASK_MIN").value_or(0);
  // Arrays with steps (--array=0-9:2) leave gaps no index can fill.
  if (*id < first || *id - first >= *count)
    throw std::runtime_error("SLURM_ARRAY_TASK_ID=" + std::to_string(*id) + " is not among SLURM_ARRAY_TASK_COUNT=" +
                             std::to_string(*count) + " tasks from SLURM_ARRAY_TASK_MIN=" + std::to_string(first) +
                             " (give the array as a contiguous range, e.g. --array=0-3)");
  return Shard{*id - first, *count, "SLURM_ARRAY_TASK_ID"};
}

const char* real_getenv(const char* name) { return std::getenv(name); }

}  // namespace

std::string Shard::label() const {
  return count > 1 ? std::to_string(index + 1) + "/" + std::to_string(count) : std::string();
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw std::runtime_error("--shard: expected I/N (0 <= I < N), got '" + text + "'");
  const int count = whole_number(text.substr(slash + 1), "--shard " + text + ": N");
  if (count < 1) throw std::runtime_error("--shard " + text + ": N must be at least 1");
  const int index = whole_number(text.substr(0, slash), "--shard " + text + ": I", count);
  return Shard{index, count, "--shard"};
}

std::optional<Shard> shard_from_environment(const GetEnv& getenv) {
  const std::optional<Shard> rank = launcher_rank(getenv);
  const std::optional<Shard> task = array_task(getenv);
  if (!task) return rank && rank->count > 1 ? rank : std::nullopt;
  if (!rank) return task->count > 1 ? task : std::nullopt;
  Shard both{task->index * rank->count + rank->index, task->count * rank->count, task->source + " x " + rank->source};
  return both.count > 1 ? std::optional<Shard>(both) : std::nullopt;
}

std::optional<Shard> shard_from_environment() { return shard_from_environment(real_getenv); }

Shard shard_for_this_process(const std::string& flag) {
  if (!flag.empty()) return parse_shard(flag);
  return shard_from_environment().value_or(Shard{});
}

std::optional<int> local_rank_from_environment(const GetEnv& getenv) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const auto v = number_variable(getenv, name)) return v;
  return std::nullopt;
}

std::optional<int> local_rank_from_environment() { return local_rank_from_environment(real_getenv); }

}  // namespace gi

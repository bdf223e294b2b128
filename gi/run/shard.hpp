#pragma once
// Which kernels of an evolve-all this process takes when several processes
// share one evolve-all folder. The processes are started by an existing
// engine, never by a protocol of gi's own: the ranks of `mpirun` (Open MPI,
// MPICH), the tasks of Slurm's `srun`, the tasks of a Slurm job array, or the
// one child per GPU of `gi evolve-all --gpus`. Each reads its place from the
// variables its launcher sets, and kernel i goes to shard i mod count: the
// same kernels to the same shard in every job, so a job restarted after a
// rank died resumes each kernel's run where its folder ends.
//
// gi does not link an MPI library: the GPU hosts' Open MPI is not the
// development machine's, and sharding over a shared folder needs no
// messages (the folder's plan is updated under a lock, gi/run/folder_lock.hpp).
#include <functional>
#include <optional>
#include <string>

namespace gi {

struct Shard {
  int index = 0;  // 0 .. count-1
  int count = 1;
  std::string source;  // what set it: "--shard", "OMPI_COMM_WORLD_RANK", ...
  bool takes(int kernel_index) const { return kernel_index % count == index; }
  // "2/4" (1-based, for people) or "" when there is one shard.
  std::string label() const;
};

// "I/N" with 0 <= I < N; throws std::runtime_error naming the text.
Shard parse_shard(const std::string& text);

using GetEnv = std::function<const char*(const char*)>;

// --shard when given (non-empty), else the launcher's variables, else the
// one shard that takes every kernel.
Shard shard_for_this_process(const std::string& flag);

// The shard the launcher's variables give, or nullopt when none says there
// are several processes. A launcher's rank (Open MPI, then PMI as MPICH and
// Slurm's PMI set it, then srun's SLURM_PROCID of SLURM_STEP_NUM_TASKS: not
// SLURM_NTASKS, which a batch script outside srun sees too) combines with a job array's
// task (SLURM_ARRAY_TASK_ID from SLURM_ARRAY_TASK_MIN, of
// SLURM_ARRAY_TASK_COUNT): index = task * ranks + rank. Throws
// std::runtime_error naming a variable that is not a number in range.
std::optional<Shard> shard_from_environment(const GetEnv& getenv);
std::optional<Shard> shard_from_environment();

// This process's rank among those of its launcher on the same host
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID), which picks
// its GPU when a host has several; nullopt when none is set.
std::optional<int> local_rank_from_environment(const GetEnv& getenv);
std::optional<int> local_rank_from_environment();

}  // namespace gi

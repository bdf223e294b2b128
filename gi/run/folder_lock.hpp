#pragma once
// Processes that share one evolve-all folder (ranks of an MPI or Slurm job,
// the per-GPU children of `gi evolve-all --gpus`) take turns updating its
// plan and the GPU folder's README and failures list: each update happens
// while holding an exclusive flock(2) on a lock file in the folder. Linux's
// NFS client maps flock onto byte-range locks, so hosts that share the
// folder over NFS take turns too. The lock goes with the open file: a
// process that dies holding it releases it.
#include <filesystem>

namespace gi {

class FolderLock {
 public:
  // Creates `file` when missing and blocks until the lock is held. Throws
  // std::runtime_error naming the file when it cannot be opened or locked.
  explicit FolderLock(const std::filesystem::path& file);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace gi

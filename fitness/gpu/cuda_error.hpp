#pragma once
// CUDA failures as exceptions that name the call and the CUDA error, and the
// mapping from a CUDA error to the status of the variant that caused it.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

class CudaError : public std::runtime_error {
 public:
  // `code` is a cudaError_t or a CUresult (their values agree for the errors
  // that matter here: 700 illegal address, 710 assert, 719 launch failure...).
  CudaError(std::string call, int code, std::string what);
  const std::string& call() const { return call_; }
  int code() const { return code_; }

 private:
  std::string call_;
  int code_;
};

// "cudaMalloc: cudaErrorMemoryAllocation (out of memory)"
std::string describe_runtime_error(const char* call, cudaError_t code);

// Throws CudaError unless `code` is cudaSuccess.
void check_runtime(cudaError_t code, const char* call);

// What a CUDA error says about the variant that ran: IllegalAddress, Trap
// (assert, trap, illegal instruction, other faults inside the kernel),
// LaunchError (configuration, resources, parameters) or Timeout (the
// display watchdog).
RunStatus run_status_of(int cuda_error_code);

// True for the errors after which the CUDA context is lost: every later call
// fails, so the process must be replaced.
bool is_sticky_error(int cuda_error_code);

}  // namespace gi::fitness

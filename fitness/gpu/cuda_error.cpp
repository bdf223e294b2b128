#include "fitness/gpu/cuda_error.hpp"

namespace gi::fitness {

CudaError::CudaError(std::string call, int code, std::string what)
    : std::runtime_error(std::move(what)), call_(std::move(call)), code_(code) {}

std::string describe_runtime_error(const char* call, cudaError_t code) {
  return std::string(call) + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")";
}

void check_runtime(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  throw CudaError(call, static_cast<int>(code), describe_runtime_error(call, code));
}

RunStatus run_status_of(int code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:      // cudaErrorIllegalAddress
    case CUDA_ERROR_MISALIGNED_ADDRESS:   // cudaErrorMisalignedAddress
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
      return RunStatus::IllegalAddress;
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:        // what __trap() reports on most drivers
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return RunStatus::Trap;
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return RunStatus::Timeout;
    default:
      // Invalid configuration, too many resources requested, invalid value
      // or handle, out of memory at launch, ...
      return RunStatus::LaunchError;
  }
}

bool is_sticky_error(int code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

}  // namespace gi::fitness

// The runtime and driver codes must agree for run_status_of() to take either.
#define GI_SAME_CODE(rt, drv) static_assert(static_cast<int>(rt) == static_cast<int>(drv), #rt)
GI_SAME_CODE(cudaErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS);
GI_SAME_CODE(cudaErrorMisalignedAddress, CUDA_ERROR_MISALIGNED_ADDRESS);
GI_SAME_CODE(cudaErrorInvalidAddressSpace, CUDA_ERROR_INVALID_ADDRESS_SPACE);
GI_SAME_CODE(cudaErrorAssert, CUDA_ERROR_ASSERT);
GI_SAME_CODE(cudaErrorIllegalInstruction, CUDA_ERROR_ILLEGAL_INSTRUCTION);
GI_SAME_CODE(cudaErrorHardwareStackError, CUDA_ERROR_HARDWARE_STACK_ERROR);
GI_SAME_CODE(cudaErrorInvalidPc, CUDA_ERROR_INVALID_PC);
GI_SAME_CODE(cudaErrorLaunchFailure, CUDA_ERROR_LAUNCH_FAILED);
GI_SAME_CODE(cudaErrorLaunchTimeout, CUDA_ERROR_LAUNCH_TIMEOUT);
GI_SAME_CODE(cudaErrorECCUncorrectable, CUDA_ERROR_ECC_UNCORRECTABLE);
GI_SAME_CODE(cudaErrorContextIsDestroyed, CUDA_ERROR_CONTEXT_IS_DESTROYED);
#undef GI_SAME_CODE

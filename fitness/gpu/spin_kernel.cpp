#include "fitness/gpu/spin_kernel.hpp"

#include <stdexcept>

#include "fitness/gpu/cuda_driver.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"

namespace gi::fitness {

namespace {

const char* kSpinSource = R"(
extern "C" __global__ void gi_spin(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}
)";

}  // namespace

SpinKernel::SpinKernel(const std::string& arch) {
  Compiler compiler(std::nullopt);
  CompileRequest request;
  request.source = kSpinSource;
  request.file_name = "gi_spin.cu";
  request.arch = arch;
  const CompileResult compiled = compiler.compile(request);
  if (!compiled.ok) throw std::runtime_error("spin kernel: " + compiled.error + "\n" + compiled.log);
  const DriverApi& api = driver_api();
  check_driver(api.module_load_data(&module_, compiled.cubin.data()), "cuModuleLoadData(spin kernel)");
  const CUresult status = api.module_get_function(&function_, module_, "gi_spin");
  if (status != CUDA_SUCCESS) {
    api.module_unload(module_);
    check_driver(status, "cuModuleGetFunction(gi_spin)");
  }
}

SpinKernel::~SpinKernel() {
  if (module_) driver_api().module_unload(module_);
}

void SpinKernel::launch(cudaStream_t stream, double microseconds) {
  unsigned long long nanoseconds = static_cast<unsigned long long>(microseconds * 1000.0);
  void* args[] = {&nanoseconds};
  check_driver(driver_api().launch_kernel(function_, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr),
               "cuLaunchKernel(spin kernel)");
}

}  // namespace gi::fitness

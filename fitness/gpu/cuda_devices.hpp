#pragma once
// What CUDA can see on this machine. Probing never aborts: on a machine with
// no driver or GPU it reports driver_ok=false and says why.
#include <cstddef>
#include <string>
#include <vector>

namespace gi::fitness {

struct GpuInfo {
  int index = -1;
  std::string name;
  std::string pci_bus_id;  // e.g. "0000:65:00.0"; identifies the card in a run's log
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t memory_bytes = 0;
  int sm_count = 0;
  int l2_bytes = 0;
  int clock_khz = 0;         // peak SM clock
  int memory_clock_khz = 0;  // peak memory clock
  int memory_bus_bits = 0;
};

struct CudaEnvironment {
  bool driver_ok = false;
  std::string message;      // "ok: N device(s)" or why no device can be used
  int driver_version = 0;   // e.g. 13000; 0 when there is no driver
  int runtime_version = 0;  // of the statically linked runtime
  int toolkit_version = 0;  // CUDART_VERSION of the headers gi was built with
  std::vector<GpuInfo> gpus;
};

CudaEnvironment probe_cuda();

// A device made current for this thread, its primary context created and
// the driver functions gi needs resolved: what every GPU user of gi (the
// runner, gi register's device) starts from.
struct OpenedDevice {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string arch;  // the NVRTC target, "sm_90"
};
// Throws CudaError with a message starting "no CUDA device" when `device`
// cannot be used.
OpenedDevice open_device(int device);

// 13000 -> "13.0"; 0 -> "none".
std::string cuda_version_string(int version);

}  // namespace gi::fitness

#include "gi/register/compute_device.hpp"

#include <stdexcept>

#include "fitness/workload/workload_plan.hpp"

namespace gi::reg {

ResolvedLaunch resolve_launch(const RegistrationKernel& kernel, const KernelArgs& args) {
  ResolvedLaunch r;
  try {
    r.plan = fitness::launch_plan_shape(kernel.spec, args.variables, kernel.tuning.block_size, kernel.launch);
  } catch (const std::exception& e) {
    throw std::runtime_error("kernel " + kernel.name + ": " + e.what());
  }
  for (const fitness::BufferArg& b : r.plan.buffers) {
    const auto it = args.buffers.find(b.name);
    if (it == args.buffers.end())
      throw std::runtime_error("kernel " + kernel.name + ": no array given for parameter '" + b.name + "'");
    const std::size_t needed = b.count * fitness::element_bytes(b.type);
    if (it->second.bytes < needed)
      throw std::runtime_error("kernel " + kernel.name + ": the array for '" + b.name + "' holds " +
                               std::to_string(it->second.bytes) + " bytes, the spec's count needs " +
                               std::to_string(needed));
    r.arrays.push_back(it->second);
  }
  return r;
}

}  // namespace gi::reg

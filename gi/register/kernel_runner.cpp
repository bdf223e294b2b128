#include "gi/register/kernel_runner.hpp"

namespace gi::reg {

void KernelRunner::run(const std::string& name, const std::map<std::string, const Buffer*>& buffers,
                       const fitness::Variables& variables) const {
  KernelArgs args;
  args.variables = variables;
  for (const auto& [param, buffer] : buffers) args.buffers[param] = buffer->array();
  device_.launch(kernels_.get(name), args);
}

}  // namespace gi::reg

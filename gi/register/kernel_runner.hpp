#pragma once
// Launching the library's kernels by name on one device, with the launch
// variables each needs: what the registration's levels, its affine stage and
// `gi transform` share (gi/register/).
#include <array>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "gi/register/compute_device.hpp"
#include "gi/register/kernel_set.hpp"

namespace gi::reg {

inline std::size_t product(const std::array<int, 3>& d) { return std::size_t(d[0]) * d[1] * d[2]; }

// `v` with some variables added or replaced (a launch's own scalars).
inline fitness::Variables with(fitness::Variables v, std::initializer_list<std::pair<const char*, double>> more) {
  for (const auto& [name, value] : more) v[name] = value;
  return v;
}

// Launches library kernels by name on one device.
class KernelRunner {
 public:
  KernelRunner(const KernelSet& kernels, ComputeDevice& device) : kernels_(kernels), device_(device) {}
  void run(const std::string& name, const std::map<std::string, const Buffer*>& buffers,
           const fitness::Variables& variables) const;
  ComputeDevice& device() const { return device_; }

 private:
  const KernelSet& kernels_;
  ComputeDevice& device_;
};

}  // namespace gi::reg

#pragma once
// Volume helpers shared by the seed generators and references: image
// dimensions, the float4 layout CUDA kernels see, typed views of workload
// bytes, and a deterministic parallel loop.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gi::seeds {

struct Dim3 {
  int x = 1, y = 1, z = 1;
  std::size_t voxels() const {
    return static_cast<std::size_t>(x) * static_cast<std::size_t>(y) * static_cast<std::size_t>(z);
  }
  std::size_t index(int i, int j, int k) const {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(y) + static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(x) +
           static_cast<std::size_t>(i);
  }
};

// CUDA's float4: 16 bytes, x y z w.
struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
};
static_assert(sizeof(Float4) == 16, "Float4 must match CUDA's float4 layout");

template <typename T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Throws naming `what` when the byte count is not a whole number of T.
template <typename T>
std::vector<T> from_bytes(const std::vector<std::byte>& bytes, const std::string& what) {
  if (bytes.size() % sizeof(T) != 0)
    throw std::runtime_error(what + ": " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                             std::to_string(sizeof(T)) + "-byte elements");
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// Calls body(begin, end) on disjoint chunks of [0, n) on up to
// hardware_concurrency threads. Results must not depend on the chunking
// (each index computes its own values), so the output is deterministic.
void parallel_for(std::size_t n, const std::function<void(std::size_t begin, std::size_t end)>& body);

}  // namespace gi::seeds

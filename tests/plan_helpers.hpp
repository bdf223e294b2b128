#pragma once
// Building LaunchPlans by hand in tests: input bytes from a vector, scalar
// arguments from a value.
#include <cstring>
#include <string>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::test {

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

template <typename T>
fitness::ScalarArg scalar(const std::string& name, T value) {
  fitness::ScalarArg s{name, std::vector<std::byte>(sizeof(T))};
  std::memcpy(s.bytes.data(), &value, sizeof(T));
  return s;
}

}  // namespace gi::test

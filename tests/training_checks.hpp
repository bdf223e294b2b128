#pragma once
// Finding a seed's training check by what it is rather than by its place:
// the seeds' tests check each train_check's purpose, and checks added beside
// it later (renumbering train:N) must not make them test another one.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fitness/workload/kernel_spec.hpp"

namespace gi::test {

// The first train_check whose variables hold every key of `with` with the
// same value; throws naming the spec and `with` when none does.
inline const fitness::WorkloadSpec& training_check(const fitness::KernelSpec& spec, const nlohmann::json& with) {
  for (const fitness::WorkloadSpec& ws : spec.train_checks) {
    bool all = true;
    for (const auto& [key, value] : with.items()) all = all && ws.variables.contains(key) && ws.variables.at(key) == value;
    if (all) return ws;
  }
  throw std::runtime_error(spec.display_path + ": no train_check with the variables " + with.dump());
}

}  // namespace gi::test

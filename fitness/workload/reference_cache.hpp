#pragma once
// Reference outputs computed once per workload and kept on disk: the CPU
// reference of a 217^3 workload takes seconds, a run needs it every time it
// validates. Keyed by the SHA-256 of (entry, generator, variables, seed) and a
// digest of the generated inputs - so a changed generator can never pair new
// inputs with old answers; a changed reference must bump the key version in
// reference_cache.cpp. Files are written to a temporary name and renamed (a
// crash never leaves a half file under a key) and a file that does not read
// back whole and intact is a miss.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "fitness/workload/reference_registry.hpp"

namespace gi::fitness {

class ReferenceCache {
 public:
  explicit ReferenceCache(std::filesystem::path dir);

  static std::string key(const std::string& entry, const std::string& generator, const nlohmann::json& variables,
                         std::uint64_t seed, std::uint64_t inputs_digest = 0);

  std::optional<ReferenceOutputs> load(const std::string& key) const;
  // False when the file could not be written (the caller still has the values).
  bool store(const std::string& key, const ReferenceOutputs& outputs) const;
  // Loads, or computes and stores; `hit` tells which happened.
  ReferenceOutputs get_or_compute(const std::string& key, const std::function<ReferenceOutputs()>& compute,
                                  bool* hit = nullptr) const;

  std::filesystem::path file_for(const std::string& key) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// A fast 64-bit digest of a workload's derived variables and input bytes.
std::uint64_t workload_digest(const Workload& workload);

}  // namespace gi::fitness

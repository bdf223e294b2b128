#pragma once
// Reading a generator's variables from spec.json with errors that name the
// generator and the variable ("generator 'bspline_brain': variables.dim:
// expected [x, y, z] ..."). Unknown variables are errors: a typo must not
// silently fall back to a default.
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/common/volume.hpp"

namespace gi::seeds {

class GeneratorArgs {
 public:
  GeneratorArgs(std::string generator, const nlohmann::json& variables, std::vector<std::string> allowed);

  // [x, y, z] or one integer for a cube; each in 1..max_extent.
  Dim3 dims(const std::string& key, Dim3 fallback, int max_extent = 1024) const;
  double number(const std::string& key, double fallback, double lo, double hi) const;
  int integer(const std::string& key, int fallback, int lo, int hi) const;
  // A number or [x, y, z]; each in lo..hi.
  std::array<double, 3> vec3(const std::string& key, std::array<double, 3> fallback, double lo, double hi) const;
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& options) const;
  // true or false.
  bool flag(const std::string& key, bool fallback) const;
  // [v0, v1, ...]: min_count..max_count numbers, each in lo..hi (only when has(key)).
  std::vector<double> numbers(const std::string& key, double lo, double hi, std::size_t min_count,
                              std::size_t max_count) const;
  bool has(const std::string& key) const { return variables_.contains(key); }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

 private:
  std::string generator_;
  const nlohmann::json& variables_;
};

// An integer variable of a generated workload, for a reference; throws naming
// the reference (`who`) and the missing variable.
int workload_int(const fitness::Workload& w, const char* name, const char* who);

}  // namespace gi::seeds

#pragma once
// Random single-edit mutants of a seed, compiled with NVRTC: the measure of
// how often the grammar's edits give code that compiles (target >= 99%).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/evaluate/variant_build.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

struct SurveyConfig {
  int count = 300;
  std::uint64_t seed = 1;
  int jobs = 1;
  std::string arch = "sm_90";
  std::vector<std::string> options = base_compile_options();
  std::optional<std::string> cache_dir;  // none: every variant really compiles
  bool two_stage = true;                 // PTX first, ptxas once per distinct PTX (fitness::Compiler)
  std::optional<std::string> compile_servers;  // the gi binary, to compile on `jobs` compile servers
  OperatorConfig operators;
};

struct SurveyResult {
  int total = 0, compiled = 0;
  struct PerType {
    int total = 0, compiled = 0;
  };
  std::map<std::string, PerType> per_type;
  double nvrtc_seconds_per_variant = 0;  // mean NVRTC time of variants compiled (not cache hits)
  double wall_seconds = 0;
  int unique_sources = 0, cache_hits = 0;
  int ptx_reuses = 0;  // compiles that found their PTX already assembled
  bool two_stage = false;
  bool seed_compiles = false;
  std::vector<std::pair<std::string, std::string>> failures;  // patch, first error line
  nlohmann::json to_json() const;
  double rate() const { return total ? static_cast<double>(compiled) / total : 0; }
};

// Throws std::runtime_error with NVRTC's log when the unmodified seed does
// not compile: no rate is reported for it.
SurveyResult survey_mutants(const Seed& seed, const SurveyConfig& config);

// Workload constants for constant specialisation: the seed's spec.json
// training workload when present, else the placeholder "1" for every
// specialisable parameter (enough for a compile check, never for timing).
std::map<std::string, std::string> mutant_constants(const Seed& seed, bool* placeholder);

}  // namespace gi

namespace gi::fitness {
struct KernelSpec;
}

namespace gi {
// The training workload's values of the scalar parameters that constant
// specialisation may fix (those whose spec value is a workload variable).
std::map<std::string, std::string> mutant_constants_for_spec(const Seed& seed, const fitness::KernelSpec& spec);

}  // namespace gi

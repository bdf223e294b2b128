#include "gi/search/mutant_survey.hpp"

#include <chrono>
#include <sstream>

#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "grammar/cuda_rewrites.hpp"

namespace gi {

namespace {

// Kernel parameters constant specialisation may fix.
std::vector<grammar::Param> specialisable_params(const Seed& seed) {
  std::vector<grammar::Param> out;
  for (const auto& f : seed.grammar.parsed().functions)
    if (f.is_kernel)
      for (const auto& p : f.params)
        if (grammar::specialisable(p)) out.push_back(p);
  return out;
}

}  // namespace

std::map<std::string, std::string> mutant_constants(const Seed& seed, bool* placeholder) {
  std::map<std::string, std::string> out;
  const auto params = specialisable_params(seed);
  if (seed.spec && seed.spec->contains("workloads") && (*seed.spec)["workloads"].contains("train")) {
    const auto& vars = (*seed.spec)["workloads"]["train"].value("scalars", nlohmann::json::object());
    for (const auto& p : params)
      if (vars.contains(p.name)) out[p.name] = vars[p.name].dump();
  }
  if (placeholder) *placeholder = out.empty();
  if (out.empty())
    for (const auto& p : params) out.emplace(p.name, std::string(1, '1'));  // emplace: gcc 12 -Wrestrict false positive on = "1"
  return out;
}

SurveyResult survey_mutants(const Seed& seed, const SurveyConfig& config) {
  const auto start = std::chrono::steady_clock::now();
  SurveyResult result;
  EditOperators ops(seed.grammar, config.operators);
  std::mt19937_64 rng(config.seed);
  std::vector<grammar::Patch> patches;
  std::vector<fitness::CompileRequest> requests;
  fitness::CompileRequest base;
  base.file_name = seed.grammar.file_name();
  base.options = seed.build.compile_options();
  base.options.insert(base.options.end(), config.options.begin(), config.options.end());
  base.headers = seed.build.headers;
  base.name_expressions = seed_name_expressions(seed);
  base.arch = config.arch;
  // The unpatched seed first: a seed that does not compile makes every rate meaningless.
  base.source = variant_source(seed, grammar::Patch{}).compile_source;
  requests.push_back(base);
  for (int i = 0; i < config.count; ++i) {
    grammar::Patch p;
    ops.append_random_edit(p, rng);
    base.source = variant_source(seed, p).compile_source;
    requests.push_back(base);
    patches.push_back(std::move(p));
  }
  fitness::Compiler compiler(config.cache_dir ? std::optional<std::filesystem::path>(*config.cache_dir) : std::nullopt);
  compiler.set_two_stage(config.two_stage);
  if (config.compile_servers) compiler.set_compile_servers(std::filesystem::path(*config.compile_servers), config.jobs);
  result.two_stage = compiler.two_stage();
  const auto results = compiler.compile_all(requests, config.jobs);
  result.seed_compiles = results[0].ok;
  // Rates of mutants of a seed that does not compile mean nothing: say why,
  // with NVRTC's own words, instead of a rate of 0.
  if (!results[0].ok)
    throw std::runtime_error(seed.display_path + ": the unmodified seed does not compile with NVRTC for " + config.arch +
                             " (" + results[0].error + "); NVRTC's log:\n" + results[0].log);
  std::map<std::string, bool> seen;
  double nvrtc_seconds = 0;
  int nvrtc_count = 0;
  for (std::size_t i = 1; i < results.size(); ++i) {
    const auto& r = results[i];
    const auto& edit = patches[i - 1].edits[0];
    auto& per = result.per_type[edit.family];
    ++per.total;
    ++result.total;
    if (r.ok) {
      ++per.compiled;
      ++result.compiled;
    } else if (result.failures.size() < 20) {
      result.failures.emplace_back(grammar::to_string(patches[i - 1]), r.error);
    }
    if (!seen.count(r.key)) {
      seen[r.key] = true;
      if (!r.cache_hit) {
        nvrtc_seconds += r.compile_seconds;
        ++nvrtc_count;
      }
    }
    if (r.cache_hit) ++result.cache_hits;
    else if (r.ptx_reused) ++result.ptx_reuses;
  }
  result.unique_sources = static_cast<int>(seen.size());
  result.nvrtc_seconds_per_variant = nvrtc_count ? nvrtc_seconds / nvrtc_count : 0;
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

nlohmann::json SurveyResult::to_json() const {
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [type, p] : per_type)
    per[type] = {{"total", p.total}, {"compiled", p.compiled},
                 {"rate", p.total ? static_cast<double>(p.compiled) / p.total : 0.0}};
  nlohmann::json fails = nlohmann::json::array();
  for (const auto& [patch, error] : failures) fails.push_back({{"patch", patch}, {"error", error}});
  return {{"total", total},
          {"compiled", compiled},
          {"rate", rate()},
          {"per_type", per},
          {"seed_compiles", seed_compiles},
          {"unique_sources", unique_sources},
          {"two_stage", two_stage},
          {"ptx_reuses", ptx_reuses},
          {"nvrtc_seconds_per_variant", nvrtc_seconds_per_variant},
          {"wall_seconds", wall_seconds},
          {"wall_seconds_per_variant", total ? wall_seconds / total : 0.0},
          {"failures", fails}};
}

}  // namespace gi

#include "fitness/workload/kernel_spec.hpp"

namespace gi {

std::map<std::string, std::string> mutant_constants_for_spec(const Seed& seed, const fitness::KernelSpec& spec) {
  // A parameter is specialised only if its value is the same in the training
  // workload and every held-out one: an evolved kernel must stay correct on
  // data it never saw, so image sizes that differ across workloads stay free.
  auto declared = [](const fitness::WorkloadSpec& w) {
    fitness::Variables v;
    for (const auto& [k, val] : w.variables.items())
      if (val.is_number()) v[k] = val.get<double>();
    return v;
  };
  std::map<std::string, std::string> out;
  for (const auto& p : specialisable_params(seed)) {
    const fitness::ParamSpec* ps = spec.find_parameter(p.name);
    if (!ps || ps->is_buffer()) continue;
    try {
      const double value = ps->value.evaluate(declared(spec.train));
      bool same = true;
      for (const auto& w : spec.train_checks) same &= ps->value.evaluate(declared(w)) == value;
      for (const auto& w : spec.validate) same &= ps->value.evaluate(declared(w)) == value;
      if (!same) continue;
      std::ostringstream text;
      text.precision(17);
      text << value;
      out[p.name] = text.str();
    } catch (const std::runtime_error&) {
      // Depends on a derived variable (e.g. the active voxel count): not fixed.
    }
  }
  return out;
}

}  // namespace gi

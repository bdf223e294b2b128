#include "gi/library/seed_coverage.hpp"

#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"
#include "grammar/patch_apply.hpp"

namespace gi {

std::string coverage_workload_name(const std::string& which, const SwitchSetting& setting) {
  return setting.name.empty() ? which : which + "@" + setting.name;
}

InstrumentedSeed build_instrumented_seed(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                         const Tuning& tuning,
                                         const std::optional<std::filesystem::path>& cache,
                                         const SwitchSetting& setting) {
  InstrumentedSeed result;
  const std::string file = seed.grammar.file_name();
  try {
    // Unresolved: the preprocessor drops the dead paths, whose counters stay
    // 0. The device source: host code is set aside as in every compile.
    const std::string source = grammar::patch_kernel(seed.grammar, setting.patch, seed.context).device_source;
    result.instrumentation = fitness::instrument_branches(source, file, spec.entry);
  } catch (const std::exception& e) {
    result.error = "cannot instrument the seed for coverage: " + std::string(e.what());
    return result;
  }
  // As every variant compiles: the seed's headers, its NVRTC options, its name expressions.
  const fitness::CompileRequest request = variant_request(result.instrumentation.source, seed, tuning, runner.arch());
  fitness::Compiler compiler(cache ? std::optional<std::filesystem::path>(*cache / "compile") : std::nullopt);
  const fitness::CompileResult binary = compiler.compile(request);
  if (!binary.ok) {
    result.error = "the seed instrumented for coverage does not compile: " + binary.error;
    return result;
  }
  fitness::LoadResult loaded = runner.load(binary.cubin, spec.entry);
  if (!loaded.ok()) {
    result.error = "the seed instrumented for coverage does not load: " + loaded.message;
    return result;
  }
  result.kernel = std::move(loaded.kernel);
  return result;
}

CoverageRun run_coverage(fitness::GpuRunner& runner, const InstrumentedSeed& instrumented,
                         const fitness::PreparedWorkload& workload) {
  CoverageRun r;
  r.workload = workload.which;
  if (!instrumented.kernel) {
    r.run.check.status = fitness::RunStatus::LoadError;
    r.run.check.message = instrumented.error.empty() ? "no instrumented kernel" : instrumented.error;
    return r;
  }
  r.run = runner.run_counted(*instrumented.kernel, workload.plan, workload.expected, workload.tolerance,
                             fitness::kBranchCounterSymbol, instrumented.instrumentation.counters());
  return r;
}

std::string SeedCoverage::failure() const {
  if (!error.empty()) return error;
  if (!report) return "no coverage measured";
  std::string s;
  const auto untaken = report->untaken();
  if (!untaken.empty()) {
    s = "untaken branch directions (not exempt in the spec's coverage_exempt):";
    for (const fitness::DirectionCoverage* d : untaken)
      s += " " + report->name(*d) + " (" + report->sites[d->site].text + ");";
    s.pop_back();
  }
  for (const std::string& e : report->errors) s += (s.empty() ? "" : "; ") + e;
  return s;
}

SeedCoverage seed_coverage(const InstrumentedSeed& instrumented, const fitness::KernelSpec& spec,
                           const std::vector<CoverageRun>& runs, const std::vector<SwitchSetting>& settings) {
  SeedCoverage c;
  std::vector<std::string> workloads;
  std::vector<std::vector<std::uint64_t>> counts;
  for (const CoverageRun& r : runs) {
    nlohmann::json j = {{"workload", r.workload}, {"status", fitness::to_string(r.run.check.status)}};
    if (!r.run.check.ok()) {
      j["message"] = r.run.check.message;
      if (c.error.empty())
        c.error = instrumented.kernel ? "the seed instrumented for coverage failed on " + r.workload + " (" +
                                            fitness::to_string(r.run.check.status) + "): " + r.run.check.message
                                      : r.run.check.message;
    }
    c.runs.push_back(std::move(j));
    workloads.push_back(r.workload);
    counts.push_back(r.run.counts);
  }
  if (!instrumented.error.empty()) c.error = instrumented.error;
  std::vector<std::string> expected;
  for (const SwitchSetting& setting : settings)
    for (const std::string& which : spec.training_workloads()) expected.push_back(coverage_workload_name(which, setting));
  if (c.error.empty() && workloads != expected)
    c.error = "coverage runs on " + std::to_string(workloads.size()) + " workloads, the training set has " +
              std::to_string(expected.size());
  if (!c.error.empty()) return c;
  c.report = fitness::coverage_report(instrumented.instrumentation.sites, workloads, counts, spec.coverage_exempt,
                                      spec.display_path);
  return c;
}

SeedCoverage measure_seed_coverage(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                   const Tuning& tuning, const std::optional<std::filesystem::path>& cache,
                                   std::uint64_t generator_seed) {
  use_seed_as_reference(seed, spec, runner.device(), cache);
  const std::vector<SwitchSetting> settings = switch_settings(seed);
  std::vector<InstrumentedSeed> builds;
  for (const SwitchSetting& setting : settings)
    builds.push_back(build_instrumented_seed(runner, seed, spec, tuning, cache, setting));
  const std::optional<std::filesystem::path> refs =
      cache ? std::optional<std::filesystem::path>(*cache / "reference") : std::nullopt;
  std::vector<std::vector<CoverageRun>> by_setting(settings.size());
  for (const std::string& which : spec.training_workloads()) {
    fitness::PreparedWorkload work = fitness::prepare_workload(spec, which, generator_seed, refs, tuning.block_size);
    for (std::size_t s = 0; s < settings.size() && runner.usable(); ++s) {
      if (!builds[s].kernel) continue;
      fitness::set_launch_geometry(work.plan, spec, work.variables, tuning.block_size,
                                   variant_source(seed, settings[s].patch).launch);
      CoverageRun run = run_coverage(runner, builds[s], work);
      run.workload = coverage_workload_name(which, settings[s]);
      by_setting[s].push_back(std::move(run));
    }
  }
  std::vector<CoverageRun> runs;
  for (auto& r : by_setting) runs.insert(runs.end(), r.begin(), r.end());
  for (std::size_t s = 1; s < settings.size(); ++s)
    if (!builds[s].error.empty()) return seed_coverage(builds[s], spec, runs, settings);
  return seed_coverage(builds[0], spec, runs, settings);
}

nlohmann::json to_json(const SeedCoverage& c) {
  nlohmann::json j = c.report ? fitness::to_json(*c.report) : nlohmann::json::object();
  j["passed"] = c.passed();
  j["runs"] = c.runs;
  if (!c.error.empty()) j["error"] = c.error;
  return j;
}

}  // namespace gi

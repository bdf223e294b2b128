#include "gi/library/seed_verification.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "fitness/workload/kernel_spec.hpp"
#include "fitness/check/output_check.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/seed.hpp"
#include "gi/library/seed_coverage.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"

namespace gi {

namespace {

// The worst |got - ref| / (abs + rel |ref|) over the checked values of one
// output: 1 is the edge of the tolerance, so 1 / worst is the margin left.
double worst_tolerance_ratio(const fitness::BufferArg& buffer, const std::vector<std::byte>& got,
                             const fitness::ExpectedOutput& expected, const fitness::Tolerance& tolerance) {
  const std::vector<std::size_t> compared = fitness::compared_components(buffer, expected);
  const std::vector<unsigned char> written = fitness::written_flags(buffer, expected);
  const std::size_t eb = fitness::element_bytes(buffer.type), components = fitness::element_components(buffer.type);
  double worst = 0;
  for (std::size_t e = 0; e < buffer.count; ++e) {
    if (!written[e]) continue;
    for (std::size_t c : compared) {
      const double v = fitness::component_value(buffer.type, got.data() + e * eb, c);
      const double ref = expected.values[e * components + c];
      const double allowed = tolerance.abs + tolerance.rel * std::abs(ref);
      const double diff = std::abs(v - ref);
      worst = std::max(worst, allowed > 0 ? diff / allowed : (diff > 0 ? INFINITY : 0.0));
    }
  }
  return worst;
}

std::string count_text(const nlohmann::json& coverage, const char* key) {
  return coverage.contains(key) && coverage[key].is_number() ? std::to_string(coverage[key].get<long long>()) : "-";
}

// Per kernel: how many branch directions the timed workload alone takes
// (the library before it had train_checks) and how many the whole training
// set takes; then every direction that fails a seed, with its source text.
std::string coverage_section(const std::vector<nlohmann::json>& results) {
  std::ostringstream out;
  int passed = 0, measured = 0;
  for (const auto& r : results)
    if (r.contains("coverage")) {
      ++measured;
      passed += r["coverage"].value("passed", false);
    }
  out << "\n## Branch coverage of the training set\n\n"
      << "Every seed instrumented with a counter per branch direction (each `if`, each `?:` condition, each "
         "operand of `&&` / `||`; fitness/instrument/branch_coverage.hpp) and run on every training workload. A direction "
         "that no training workload takes can be deleted by an edit that still passes training, so a seed "
         "fails verification when it leaves one untaken that its spec does not exempt (`coverage_exempt`, with a "
         "reason). \"train alone\" is the coverage of the timed workload by itself: the library before it had "
         "correctness-only training workloads. `gi coverage SEED_DIR` shows one seed's directions with their counts.\n\n"
      << passed << " of " << measured << " kernels measured have every direction taken or exempt.\n\n"
      << "| kernel | directions | taken by train alone | taken by the training set | exempt | untaken |\n"
      << "|---|---|---|---|---|---|\n";
  std::string untaken;
  for (const auto& r : results) {
    if (!r.contains("coverage")) continue;
    const nlohmann::json& c = r["coverage"];
    const std::string kernel = r.value("kernel", std::string("?"));
    const bool has_untaken = c.contains("untaken") && c["untaken"].is_array();
    out << "| " << kernel << " | " << count_text(c, "directions") << " | " << count_text(c, "taken_by_train")
        << " | " << count_text(c, "taken") << " | " << count_text(c, "exempt") << " | "
        << (has_untaken ? std::to_string(c["untaken"].size()) : std::string("-")) << " |\n";
    if (c.contains("error")) untaken += "- " + kernel + ": " + c["error"].get<std::string>() + "\n";
    if (has_untaken)
      for (const auto& d : c["untaken"])
        untaken += "- " + kernel + " " + d.value("branch", std::string("?")) + " " +
                   d.value("direction", std::string("?")) + ": `" + d.value("text", std::string()) + "`\n";
    if (c.contains("errors"))
      for (const auto& e : c["errors"]) untaken += "- " + kernel + ": " + e.get<std::string>() + "\n";
  }
  if (!untaken.empty()) out << "\nUntaken directions and coverage errors:\n\n" << untaken;
  return out.str();
}

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// One switch setting of the seed as verify runs it.
struct VerifiedPath {
  SwitchSetting setting;
  grammar::LaunchEffect launch;
  std::optional<fitness::LoadedKernel> kernel;
  InstrumentedSeed instrumented;
};

}  // namespace

namespace {

// Compiles and loads every switch setting of the seed, with its instrumented
// build; the error of the first that does not compile or load.
std::optional<std::string> build_paths(fitness::GpuRunner& runner, const Seed& seed, const fitness::KernelSpec& spec,
                                       const Tuning& tuning, const std::optional<std::filesystem::path>& cache,
                                       std::vector<VerifiedPath>& paths) {
  for (const SwitchSetting& setting : switch_settings(seed)) {
    VerifiedPath p{setting, {}, std::nullopt, {}};
    const BuiltVariant built = compile_variant(seed, setting.patch, tuning, runner.arch(), cache);
    p.launch = built.launch;
    const std::string which = setting.name.empty() ? "" : " (switches " + setting.name + ")";
    if (!built.binary.ok) return "does not compile" + which + ": " + built.binary.error;
    fitness::LoadResult loaded = runner.load(built.binary.cubin, spec.entry);
    if (!loaded.ok()) return loaded.message + which;
    p.kernel = std::move(loaded.kernel);
    p.instrumented = build_instrumented_seed(runner, seed, spec, tuning, cache, setting);
    paths.push_back(std::move(p));
  }
  return std::nullopt;
}

// The worst tolerance ratio over the checked outputs of the last run.
double worst_ratio_of(fitness::GpuRunner& runner, const fitness::PreparedWorkload& work) {
  double worst = 0;
  for (const auto& e : work.expected)
    for (const auto& b : work.plan.buffers)
      if (b.name == e.buffer)
        worst = std::max(worst, worst_tolerance_ratio(b, runner.buffer_bytes(work.plan, b.name), e, work.tolerance));
  return worst;
}

// Run-to-run spread: `runs - 1` more checked runs against the outputs of the
// first (`first` is its report); false in `passed` when one fails.
nlohmann::json run_to_run(fitness::GpuRunner& runner, const fitness::LoadedKernel& kernel,
                          const fitness::PreparedWorkload& work, const fitness::CheckReport& first, int runs,
                          bool& passed) {
  auto outputs = [&] {
    std::vector<std::vector<std::byte>> out;
    for (const auto& b : work.plan.buffers)
      if (b.role == fitness::ParamRole::Out || b.role == fitness::ParamRole::InOut)
        out.push_back(runner.buffer_bytes(work.plan, b.name));
    return out;
  };
  const std::vector<std::vector<std::byte>> reference = outputs();
  double spread = 0;
  int identical = 0;
  for (int run = 1; run < runs; ++run) {
    const fitness::CheckReport again = runner.run_checked(kernel, work.plan, work.expected, work.tolerance);
    passed = passed && again.ok() && first.ok();
    identical += again.output_digest == first.output_digest;
    const auto now = outputs();
    std::size_t k = 0;
    for (const auto& b : work.plan.buffers)
      if (b.role == fitness::ParamRole::Out || b.role == fitness::ParamRole::InOut) {
        spread = std::max(spread, fitness::max_difference(b, reference[k], now[k]));
        ++k;
      }
  }
  return {{"runs", runs}, {"runs_identical_to_first", identical}, {"run_to_run_max_abs", finite(spread)}};
}

}  // namespace

nlohmann::json verify_seed(fitness::GpuRunner& runner, const std::filesystem::path& dir, const VerifyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Seed seed = load_seed(dir);
  const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
  const Tuning tuning{spec.default_block_size, {}};
  use_seed_as_reference(seed, spec, runner.device(), o.cache);
  nlohmann::json result = {{"kernel", dir.parent_path().filename().string() + "/" + dir.filename().string()},
                           {"entry", spec.entry},
                           {"tolerance", {{"abs", spec.tolerance.abs}, {"rel", spec.tolerance.rel}}},
                           {"block_size", tuning.block_size}};
  runner.set_kernel_timeout(std::chrono::milliseconds(o.timeout_ms));
  // Every path of every switch (the seed's own setting first) is checked
  // like the seed, and the branch coverage of each path is measured where
  // that path is compiled in.
  std::vector<VerifiedPath> paths;
  if (const auto error = build_paths(runner, seed, spec, tuning, o.cache, paths)) {
    result["passed"] = false;
    result["error"] = *error;
    return result;
  }
  std::vector<SwitchSetting> settings;
  for (const VerifiedPath& p : paths) settings.push_back(p.setting);
  if (settings.size() > 1) {
    nlohmann::json names = nlohmann::json::array();
    for (const SwitchSetting& s : settings) names.push_back(s.name.empty() ? "default" : s.name);
    result["switch_settings"] = names;
  }
  // The whole training set (the search checks every one of its workloads
  // every generation), then the held-out workloads.
  const std::vector<std::string> workloads = spec.every_workload();
  const std::size_t training = spec.training_workloads().size();
  std::vector<std::vector<CoverageRun>> coverage_runs(paths.size());
  bool passed = true;
  double max_abs = 0, max_rel = 0, values = 0, worst_ratio = 0;
  nlohmann::json rows = nlohmann::json::array();
  const std::optional<std::filesystem::path> refs =
      o.cache ? std::optional<std::filesystem::path>(*o.cache / "reference") : std::nullopt;
  for (std::size_t w = 0; w < workloads.size(); ++w) {
    const std::string& which = workloads[w];
    fitness::PreparedWorkload work = fitness::prepare_workload(spec, which, 0, refs, tuning.block_size);
    for (std::size_t k = 0; k < paths.size() && runner.usable(); ++k) {
      const VerifiedPath& path = paths[k];
      fitness::set_launch_geometry(work.plan, spec, work.variables, tuning.block_size, path.launch);
      const fitness::CheckReport r = runner.run_checked(*path.kernel, work.plan, work.expected, work.tolerance);
      nlohmann::json row = {{"workload", which},
                            {"status", fitness::to_string(r.status)},
                            {"values_checked", r.values_checked},
                            {"max_abs_error", finite(r.max_abs_error)},
                            {"max_rel_error", finite(r.max_rel_error)},
                            {"output_digest", r.output_digest}};
      if (!path.setting.name.empty()) row["switches"] = path.setting.name;
      if (!r.ok()) row["message"] = r.message;
      if (r.status == fitness::RunStatus::Ok || r.status == fitness::RunStatus::WrongOutput) {
        const double worst = worst_ratio_of(runner, work);
        row["worst_tolerance_ratio"] = finite(worst);
        worst_ratio = std::max(worst_ratio, worst);
      }
      passed = passed && r.ok();
      max_abs = std::max(max_abs, r.max_abs_error);
      max_rel = std::max(max_rel, r.max_rel_error);
      values += static_cast<double>(r.values_checked);
      if (k == 0 && which == "train" && (r.ok() || r.status == fitness::RunStatus::WrongOutput) && o.runs > 1) {
        row.update(run_to_run(runner, *path.kernel, work, r, o.runs, passed));
        result["run_to_run_max_abs"] = row["run_to_run_max_abs"];
      }
      rows.push_back(row);
      if (w < training && path.instrumented.kernel && runner.usable()) {
        CoverageRun run = run_coverage(runner, path.instrumented, work);
        run.workload = coverage_workload_name(which, path.setting);
        coverage_runs[k].push_back(std::move(run));
      }
    }
  }
  result["workloads"] = rows;
  std::vector<CoverageRun> all_runs;
  for (auto& r : coverage_runs) all_runs.insert(all_runs.end(), r.begin(), r.end());
  // A path whose instrumented build failed reports that, not missing runs.
  const InstrumentedSeed* instrumented = &paths[0].instrumented;
  for (const VerifiedPath& p : paths)
    if (!p.instrumented.error.empty()) instrumented = &p.instrumented;
  const SeedCoverage coverage = seed_coverage(*instrumented, spec, all_runs, settings);
  result["coverage"] = to_json(coverage);
  if (!coverage.passed()) {
    passed = false;
    result["coverage_failure"] = coverage.failure();
  }
  result["passed"] = passed;
  result["max_abs_error"] = max_abs;
  result["max_rel_error"] = max_rel;
  result["values_checked"] = values;
  result["worst_tolerance_ratio"] = finite(worst_ratio);
  result["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string verification_readme(const nlohmann::json& versions, const std::vector<nlohmann::json>& results) {
  std::ostringstream out;
  int passed = 0;
  for (const auto& r : results) passed += r.value("passed", false);
  out << "# Seed verification on " << versions.value("gpu", std::string("?")) << "\n\n"
      << "Every seed kernel, as written, run on the GPU and checked against its double-precision CPU reference on "
         "every training workload (`train` and its correctness-only `train:N`) and every held-out workload (`gi "
         "verify`; generator seed 0). Driver "
      << versions.value("driver", std::string("?")) << ", " << versions.value("date", std::string("?"))
      << ", gi " << versions.value("gi_commit", std::string("?")) << ".\n\n"
      << passed << " of " << results.size() << " kernels passed on every workload.\n\n"
      << "Margin: the tolerance divided by the worst error, i.e. 1 / max over all values of "
         "|got - ref| / (abs + rel |ref|) (above 1 passes).\n\n"
      << "| kernel | workloads passed | values checked | max abs error | max rel error | tolerance abs / rel | margin | "
         "run-to-run max abs (5 runs) |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : results) {
    int ok = 0, n = 0;
    if (r.contains("workloads"))
      for (const auto& w : r["workloads"]) {
        ++n;
        ok += w.value("status", std::string()) == "ok";
      }
    auto num = [](const nlohmann::json& v) {
      if (!v.is_number()) return std::string("-");
      std::ostringstream s;
      s.precision(3);
      s << v.get<double>();
      return s.str();
    };
    out << "| " << r.value("kernel", std::string("?")) << " | " << ok << "/" << n
        << (r.contains("error") ? " (" + r["error"].get<std::string>() + ")" : "") << " | "
        << num(r.value("values_checked", nlohmann::json())) << " | " << num(r.value("max_abs_error", nlohmann::json()))
        << " | " << num(r.value("max_rel_error", nlohmann::json())) << " | "
        << num(r["tolerance"].value("abs", nlohmann::json())) << " / " << num(r["tolerance"].value("rel", nlohmann::json()))
        << " | "
        << (r.value("worst_tolerance_ratio", nlohmann::json()).is_number() && r["worst_tolerance_ratio"].get<double>() > 0
                ? num(1.0 / r["worst_tolerance_ratio"].get<double>()) + "x"
                : std::string("-"))
        << " | " << num(r.value("run_to_run_max_abs", nlohmann::json())) << " |\n";
  }
  out << coverage_section(results);
  return out.str();
}

}  // namespace gi

#include "gi/publish/comparison.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "fitness/gpu/bandwidth.hpp"
#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"

namespace gi {

namespace {

TimingSummary summary_of(const std::vector<double>& samples) {
  const fitness::TimingResult t = fitness::summarize_timing(samples, true);
  return {t.median_ms, t.relative_spread, t.min_ms, t.max_ms, static_cast<int>(samples.size())};
}

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json timing_json(const TimingSummary& t) {
  return {{"median_ms", t.median_ms}, {"relative_spread", finite(t.relative_spread)}, {"min_ms", t.min_ms},
          {"max_ms", t.max_ms}, {"samples", t.samples}};
}

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::infinity();
}

TimingSummary timing_from_json(const nlohmann::json& j) {
  return {j.at("median_ms").get<double>(), number(j, "relative_spread"), j.at("min_ms").get<double>(),
          j.at("max_ms").get<double>(), j.at("samples").get<int>()};
}

// The launch geometry of one tuning: the plan's buffers are shared, only
// this differs between the two kernels.
struct Geometry {
  std::array<unsigned, 3> grid, block;
  std::size_t shared = 0;
};

Geometry geometry_of(const fitness::LaunchPlan& p) { return {p.grid, p.block, p.dynamic_shared_bytes}; }

void use(fitness::LaunchPlan& p, const Geometry& g) {
  p.grid = g.grid;
  p.block = g.block;
  p.dynamic_shared_bytes = g.shared;
}

std::string describe(const Tuning& t) {
  std::string s = "block " + std::to_string(t.block_size);
  for (const auto& o : t.options) s += " " + o;
  return s;
}

}  // namespace

double memory_floor_ms(double bytes, double bytes_per_s) {
  if (!(bytes > 0) || !(bytes_per_s > 0)) return 0;
  return 1e3 * bytes / bytes_per_s;
}

ComparisonResult summarize_comparison(const std::vector<fitness::PairedSample>& pairs, double min_bytes_moved,
                                      double bandwidth_bytes_per_s) {
  if (pairs.empty()) throw std::invalid_argument("comparison: no samples");
  std::vector<double> a, b;
  for (const auto& p : pairs) {
    a.push_back(p.a_ms);
    b.push_back(p.b_ms);
  }
  ComparisonResult r;
  r.samples = pairs;
  r.seed = summary_of(a);
  r.evolved = summary_of(b);
  r.speedup = fitness::speedup(a, b);
  r.speedup_ci_low = fitness::speedup_ci_low(pairs);
  r.min_bytes_moved = min_bytes_moved;
  r.bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  r.memory_floor_ms = memory_floor_ms(min_bytes_moved, bandwidth_bytes_per_s);
  r.seed_floor_fraction = r.seed.median_ms > 0 ? r.memory_floor_ms / r.seed.median_ms : 0;
  r.evolved_floor_fraction = r.evolved.median_ms > 0 ? r.memory_floor_ms / r.evolved.median_ms : 0;
  r.review = r.speedup > kReviewSpeedup;
  return r;
}

nlohmann::json ComparisonResult::to_json() const {
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : samples) pairs.push_back({p.a_ms, p.b_ms});
  return {{"gpu", gpu},
          {"workload", workload},
          {"data_seed", data_seed},
          {"tuning", {{"seed", gi::to_json(seed_tuning)}, {"evolved", gi::to_json(evolved_tuning)}}},
          {"patch", patch},
          {"baseline_patch", baseline_patch},
          {"rounds", samples.size()},
          {"seed", timing_json(seed)},
          {"evolved", timing_json(evolved)},
          {"speedup", speedup},
          {"speedup_ci_low", speedup_ci_low},
          {"min_bytes_moved", min_bytes_moved},
          {"bandwidth_bytes_per_s", bandwidth_bytes_per_s},
          {"bandwidth_tb_s", bandwidth_bytes_per_s * 1e-12},
          {"memory_floor_ms", memory_floor_ms},
          {"seed_floor_fraction", seed_floor_fraction},
          {"evolved_floor_fraction", evolved_floor_fraction},
          {"review", review},
          {"samples_ms", pairs}};
}

ComparisonResult ComparisonResult::from_json(const nlohmann::json& j) {
  ComparisonResult r;
  r.gpu = j.at("gpu").get<std::string>();
  r.workload = j.at("workload").get<std::string>();
  r.data_seed = j.at("data_seed").get<std::uint64_t>();
  r.seed_tuning = tuning_from_json(j.at("tuning").at("seed"));
  r.evolved_tuning = tuning_from_json(j.at("tuning").at("evolved"));
  r.patch = j.at("patch").get<std::string>();
  r.baseline_patch = j.value("baseline_patch", std::string());
  r.seed = timing_from_json(j.at("seed"));
  r.evolved = timing_from_json(j.at("evolved"));
  r.speedup = j.at("speedup").get<double>();
  r.speedup_ci_low = j.at("speedup_ci_low").get<double>();
  r.min_bytes_moved = j.at("min_bytes_moved").get<double>();
  r.bandwidth_bytes_per_s = j.at("bandwidth_bytes_per_s").get<double>();
  r.memory_floor_ms = j.at("memory_floor_ms").get<double>();
  r.seed_floor_fraction = j.at("seed_floor_fraction").get<double>();
  r.evolved_floor_fraction = j.at("evolved_floor_fraction").get<double>();
  r.review = j.at("review").get<bool>();
  for (const auto& p : j.at("samples_ms")) r.samples.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
  return r;
}

ComparisonResult compare(const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& evolved,
                         const Tuning& seed_tuning, const Tuning& evolved_tuning, const ComparisonOptions& options) {
  return compare(seed, seed, spec, evolved, seed_tuning, evolved_tuning, options);
}

ComparisonResult compare(const Seed& seed, const Seed& variant, const fitness::KernelSpec& spec,
                         const grammar::Patch& evolved, const Tuning& seed_tuning, const Tuning& evolved_tuning,
                         const ComparisonOptions& options) {
  return compare(seed, grammar::Patch{}, variant, spec, evolved, seed_tuning, evolved_tuning, options);
}

ComparisonResult compare(const Seed& seed, const grammar::Patch& baseline, const Seed& variant,
                         const fitness::KernelSpec& spec, const grammar::Patch& evolved, const Tuning& seed_tuning,
                         const Tuning& evolved_tuning, const ComparisonOptions& options) {
  const std::vector<ComparedVariant> one{{&variant, evolved, evolved_tuning}};
  std::vector<ComparisonOutcome> outcomes = compare_many(seed, baseline, spec, seed_tuning, one, options);
  if (!outcomes.at(0).error.empty()) throw std::runtime_error(outcomes[0].error);
  return std::move(outcomes[0].result);
}

std::vector<ComparisonOutcome> compare_many(const Seed& seed, const grammar::Patch& baseline,
                                            const fitness::KernelSpec& spec, const Tuning& seed_tuning,
                                            const std::vector<ComparedVariant>& variants,
                                            const ComparisonOptions& options) {
  if (options.rounds < 1) throw std::invalid_argument("comparison: rounds must be at least 1");
  fitness::GpuRunner runner(options.device);
  const auto cache = options.cache_dir;
  use_seed_as_reference(seed, spec, options.device, cache);
  const BuiltVariant seed_build = compile_variant(seed, baseline, seed_tuning, runner.arch(), cache);
  const fitness::CompileResult& seed_binary = seed_build.binary;
  if (!seed_binary.ok)
    throw std::runtime_error("comparison: the seed does not compile (" + describe(seed_tuning) + "): " + seed_binary.error);

  fitness::PreparedWorkload work = fitness::prepare_workload(
      spec, "train", options.data_seed,
      cache ? std::optional<std::filesystem::path>(*cache / "reference") : std::nullopt, seed_tuning.block_size);
  fitness::LaunchPlan& plan = work.plan;
  fitness::set_launch_geometry(plan, spec, work.variables, seed_tuning.block_size, seed_build.launch);
  const Geometry seed_geometry = geometry_of(plan);
  fitness::LoadResult seed_kernel = runner.load(seed_binary.cubin, spec.entry);
  if (!seed_kernel.ok()) throw std::runtime_error("comparison: cannot load the seed: " + seed_kernel.message);
  // A wrong kernel's time means nothing: every kernel must pass on this very data.
  {
    use(plan, seed_geometry);
    const fitness::CheckReport check = runner.run_checked(*seed_kernel.kernel, plan, work.expected, work.tolerance);
    if (!check.ok())
      throw std::runtime_error(std::string("comparison: the seed kernel fails on the training workload (") +
                               fitness::to_string(check.status) + "): " + check.message);
  }

  // Each variant compiled, loaded and checked; one that fails is reported
  // and left out of the timing.
  std::vector<ComparisonOutcome> outcomes(variants.size());
  std::vector<fitness::LoadResult> kernels(variants.size());
  std::vector<Geometry> geometries(variants.size());
  std::vector<std::size_t> timed;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const ComparedVariant& v = variants[i];
    const BuiltVariant build = compile_variant(*v.source, v.patch, v.tuning, runner.arch(), cache);
    if (!build.binary.ok) {
      outcomes[i].error = "comparison: the evolved variant does not compile (" + describe(v.tuning) + "): " +
                          build.binary.error;
      continue;
    }
    fitness::set_launch_geometry(plan, spec, work.variables, v.tuning.block_size, build.launch);
    geometries[i] = geometry_of(plan);
    kernels[i] = runner.load(build.binary.cubin, spec.entry);
    if (!kernels[i].ok()) {
      outcomes[i].error = "comparison: cannot load the evolved variant: " + kernels[i].message;
      continue;
    }
    use(plan, geometries[i]);
    const fitness::CheckReport check = runner.run_checked(*kernels[i].kernel, plan, work.expected, work.tolerance);
    if (!check.ok()) {
      outcomes[i].error = std::string("comparison: the evolved kernel fails on the training workload (") +
                          fitness::to_string(check.status) + "): " + check.message;
      if (!runner.usable()) throw std::runtime_error(outcomes[i].error + " (the GPU context is lost)");
      continue;
    }
    timed.push_back(i);
  }

  const double bandwidth = options.bandwidth_bytes_per_s ? *options.bandwidth_bytes_per_s
                                                         : fitness::measure_copy_bandwidth(options.device);

  // The spin kernel (which keeps launch latency out of short samples) must be
  // used for all or none, or it would bias the ratios: decide once from a
  // short first pass of each.
  fitness::TimingConfig probe = options.timing;
  probe.min_samples = probe.max_samples = 3;
  use(plan, seed_geometry);
  bool spin = runner.time(*seed_kernel.kernel, plan, probe).median_ms < options.timing.spin_below_ms;
  for (std::size_t i : timed) {
    use(plan, geometries[i]);
    spin = spin || runner.time(*kernels[i].kernel, plan, probe).median_ms < options.timing.spin_below_ms;
  }
  // One sample per call, after one discarded warm-up launch of the same
  // kernel (GpuRunner flushes L2 before each timed sample). A round times
  // the seed, then every variant in turn; each variant is paired with the
  // seed's sample of its round.
  fitness::TimingConfig one = options.timing;
  one.warmup = 1;
  one.min_samples = one.max_samples = 1;
  one.spin_below_ms = spin ? std::numeric_limits<double>::max() : 0;
  std::vector<std::vector<fitness::PairedSample>> pairs(variants.size());
  for (int round = 0; round < options.rounds; ++round) {
    use(plan, seed_geometry);
    const double seed_ms = runner.time(*seed_kernel.kernel, plan, one).samples_ms.at(0);
    for (std::size_t i : timed) {
      use(plan, geometries[i]);
      pairs[i].push_back({seed_ms, runner.time(*kernels[i].kernel, plan, one).samples_ms.at(0)});
    }
  }
  for (std::size_t i : timed) {
    ComparisonResult& r = outcomes[i].result;
    r = summarize_comparison(pairs[i], plan.min_bytes_moved, bandwidth);
    r.gpu = runner.device_name();
    r.workload = "train";
    r.data_seed = options.data_seed;
    r.seed_tuning = seed_tuning;
    r.evolved_tuning = variants[i].tuning;
    r.patch = grammar::to_string(variants[i].patch);
    r.baseline_patch = grammar::to_string(baseline);
  }
  return outcomes;
}

std::string format_comparison(const ComparisonResult& r) {
  std::ostringstream out;
  char line[512];
  auto row = [&](const char* name, const TimingSummary& t, const Tuning& tuning, double fraction) {
    std::snprintf(line, sizeof line, "  %-8s %-34s median %9.4f ms +-%5.2f%%  [%.4f .. %.4f]  %5.1f%% of floor speed\n",
                  name, describe(tuning).c_str(), t.median_ms, 100 * t.relative_spread, t.min_ms, t.max_ms,
                  100 * fraction);
    out << line;
  };
  out << "interleaved comparison on " << r.gpu << " (" << r.workload << " workload, data seed " << r.data_seed << ", "
      << r.samples.size() << " rounds A B)\n";
  row("seed", r.seed, r.seed_tuning, r.seed_floor_fraction);
  row("evolved", r.evolved, r.evolved_tuning, r.evolved_floor_fraction);
  std::snprintf(line, sizeof line, "  speed-up %.3fx (95%% lower bound %.3fx)%s\n", r.speedup, r.speedup_ci_low,
                r.review ? "  REVIEW: above 10x" : "");
  out << line;
  std::snprintf(line, sizeof line, "  memory floor %.4f ms: %.1f MB at %.2f TB/s (device-to-device copy, read + write)\n",
                r.memory_floor_ms, r.min_bytes_moved * 1e-6, r.bandwidth_bytes_per_s * 1e-12);
  out << line;
  if (!r.patch.empty()) out << "  patch: " << r.patch << "\n";
  return out.str();
}

}  // namespace gi

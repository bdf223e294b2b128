#include "gi/post_evolution.hpp"

#include <cctype>
#include <optional>
#include <stdexcept>

#include "fitness/atomic_file.hpp"
#include "gi/comparison.hpp"
#include "gi/patch_files.hpp"
#include "gi/switch_baseline.hpp"
#include "gi/results_writer.hpp"
#include "gi/validation.hpp"
#include "gi/versions.hpp"
#include "gi/variant_build.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

nlohmann::json require_json(const RunDirectory& run, const std::string& name) {
  auto j = run.read_json(name);
  if (!j) throw std::runtime_error((run.path() / name).string() + ": missing: the evolution stages must finish first");
  return *j;
}

Tuning best_tuning(const RunDirectory& run, const std::string& name) {
  const nlohmann::json j = require_json(run, name);
  try {
    return tuning_from_json(j.at("best"));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error((run.path() / name).string() + ": best: expected a tuning: " + e.what());
  }
}

}  // namespace

// The files the publication stages write for the candidate they publish.
static const char* const kCandidateRecords[] = {"validation.json", "comparison.json", "comparison_switches.json"};
static constexpr const char* kSearchBestDir = "search_best";
static constexpr const char* kSetAsideMarker = "set_aside.json";
const char* const kFailedValidation = "it failed held-out validation or a sanitizer (search_best/validation.json)";

const char* const kNotFaster = "the comparison's 95% lower bound of the speed-up over the tuned seed is not above 1";

void set_search_best_aside(RunDirectory& run, const std::string& reason) {
  const fs::path aside = run.path() / kSearchBestDir;
  fs::create_directories(aside);
  for (const char* name : kCandidateRecords)
    if (fs::exists(run.path() / name)) fs::rename(run.path() / name, aside / name);
  fitness::write_file_atomically(
      aside / kSetAsideMarker,
      nlohmann::json{{"reason", reason}, {"published", "the tuned seed (empty patch)"}}.dump(2) + "\n");
}

bool search_best_set_aside(RunDirectory& run) {
  const fs::path aside = run.path() / kSearchBestDir;
  if (!fs::exists(aside)) return false;
  // A call killed part way: what moved first tells why it moved (a rejected
  // winner has no comparison to move).
  if (!fs::exists(aside / kSetAsideMarker)) {
    const bool compared = fs::exists(aside / "comparison.json") || fs::exists(run.path() / "comparison.json");
    set_search_best_aside(run, compared ? kNotFaster : kFailedValidation);
  }
  return true;
}

nlohmann::json search_best_summary(const RunDirectory& run) {
  const std::string dir = kSearchBestDir;
  const auto marker = run.read_json(dir + "/" + kSetAsideMarker);
  nlohmann::json summary{{"records", dir + "/"}, {"reason", marker ? marker->value("reason", "") : ""}};
  if (const auto j = run.read_json(dir + "/comparison.json")) {
    const ComparisonResult c = ComparisonResult::from_json(*j);
    summary["patch"] = c.patch;
    summary["tuning"] = to_json(c.evolved_tuning);
    summary["speedup"] = c.speedup;
    summary["speedup_ci_low"] = c.speedup_ci_low;
    return summary;
  }
  const auto v = run.read_json(dir + "/validation.json");
  if (!v) throw std::runtime_error((run.path() / dir).string() + ": neither a comparison nor a validation of the set-aside search best");
  const ValidationResult validation = ValidationResult::from_json(*v);
  // The winner validated was the minimised patch at the search's tuning.
  std::string patch = read_text_file(run.path() / "minimised.gi");
  while (!patch.empty() && std::isspace(static_cast<unsigned char>(patch.back()))) patch.pop_back();
  summary["patch"] = patch;
  summary["tuning"] = to_json(best_tuning(run, "tuning_best.json"));
  std::vector<std::string> rejected = validation.problems;
  for (const SanitizerResult* s : {&validation.memcheck, &validation.racecheck})
    if (s->status != "skipped" && !s->passed()) rejected.push_back("compute-sanitizer " + s->tool + ": " + s->status);
  summary["rejected"] = rejected;
  return summary;
}

bool shows_improvement(const ComparisonResult& c) { return c.speedup_ci_low > 1.0; }

bool post_evolve(RunDirectory& run, const Seed& seed, const fitness::KernelSpec& spec, const fs::path& evolved_root,
                 const PostEvolveOptions& options) {
  auto say = [&](const std::string& s) {
    if (options.say) options.say(s);
  };
  const fs::path patch_file = run.path() / "minimised.gi";
  if (!fs::exists(patch_file))
    throw std::runtime_error(patch_file.string() + ": missing: the evolution stages must finish first");
  const grammar::Patch search_patch = read_patch_for(seed, patch_file);
  const nlohmann::json minimised = require_json(run, "minimised.json");
  const Tuning seed_tuning = best_tuning(run, "tuning_seed.json");
  const Tuning search_tuning = best_tuning(run, "tuning_best.json");

  // A search's best that the comparison does not show faster than the tuned
  // seed is set aside, and the tuned seed itself (the empty patch) goes
  // through validation and the comparison in its place.
  const bool tuned_seed_kept = search_best_set_aside(run);
  const grammar::Patch patch = tuned_seed_kept ? grammar::Patch{} : search_patch;
  const Tuning evolved_tuning = tuned_seed_kept ? seed_tuning : search_tuning;
  const fs::path gi_binary = options.gi_binary.empty() ? fs::read_symlink("/proc/self/exe") : options.gi_binary;
  const fs::path cache_dir = fs::absolute(options.cache_dir);

  // Stage 5: held-out validation and the sanitizers.
  std::optional<nlohmann::json> validation_json = run.read_json("validation.json");
  if (!validation_json) {
    say("validating " + std::string(tuned_seed_kept ? "the tuned seed" : "the winner") + " on " +
        std::to_string(spec.validate.size()) + " held-out workloads (twice each)...");
    ValidationOptions vo;
    vo.gi_binary = gi_binary;
    vo.device = options.device;
    vo.cache_dir = cache_dir;
    vo.sanitizers = options.sanitizers;
    vo.sanitizer_timeout = options.sanitizer_timeout;
    vo.log = options.say;
    validation_json = validate(seed, spec, patch, evolved_tuning, vo).to_json();
    run.write_text("validation.json", validation_json->dump(2) + "\n");
  }
  const ValidationResult validation = ValidationResult::from_json(*validation_json);
  bool valid = validation.passed;
  if (!valid) {
    say("validation FAILED:");
    for (const auto& p : validation.problems) say("  " + p);
  }
  for (const SanitizerResult* s : {&validation.memcheck, &validation.racecheck}) {
    if (s->status == "skipped") {
      say("compute-sanitizer " + s->tool + " skipped: " + s->reason);
    } else if (!s->passed()) {
      say("compute-sanitizer " + s->tool + " " + s->status + " (" + s->reason + "; " + s->summary + ")");
      valid = false;
    }
  }
  if (!valid) {
    // A rejected winner is no improvement: the tuned seed takes its place,
    // as for a winner not shown faster. Only the tuned seed itself failing
    // leaves nothing to publish.
    if (tuned_seed_kept) {
      say("the tuned seed itself fails; nothing is published");
      return false;
    }
    say("the winner is set aside in search_best/ and the tuned seed is validated in its place");
    set_search_best_aside(run, kFailedValidation);
    return post_evolve(run, seed, spec, evolved_root, options);
  }

  // Stage 6: the interleaved comparison.
  std::optional<nlohmann::json> comparison_json = run.read_json("comparison.json");
  if (!comparison_json) {
    say("measuring seed vs " + std::string(tuned_seed_kept ? "itself" : "evolved") + " interleaved (" +
        std::to_string(options.rounds) + " rounds)...");
    ComparisonOptions co;
    co.device = options.device;
    co.rounds = options.rounds;
    co.data_seed = options.train_data_seed;
    co.cache_dir = cache_dir;
    const ComparisonResult c = compare(seed, spec, patch, seed_tuning, evolved_tuning, co);
    say(format_comparison(c));
    comparison_json = c.to_json();
    (*comparison_json)["date"] = utc_now_iso8601();
    run.write_text("comparison.json", comparison_json->dump(2) + "\n");
  }
  const ComparisonResult comparison = ComparisonResult::from_json(*comparison_json);
  if (!tuned_seed_kept && !shows_improvement(comparison)) {
    say("the winner is not shown faster than the tuned seed (lower bound " + std::to_string(comparison.speedup_ci_low) +
        "x); it is set aside in search_best/ and the tuned seed is published");
    set_search_best_aside(run, kNotFaster);
    return post_evolve(run, seed, spec, evolved_root, options);
  }

  // Stage 6b: against the best switch setting without line edits (seeds with switches).
  std::optional<ComparisonResult> over_switches;
  if (const auto baseline_json = run.read_json("switch_baseline.json")) {
    std::optional<nlohmann::json> j = run.read_json("comparison_switches.json");
    if (!j) {
      const SwitchBaseline baseline = SwitchBaseline::from_json(*baseline_json);
      say("measuring the best switch setting without edits vs evolved interleaved (" + std::to_string(options.rounds) +
          " rounds)...");
      ComparisonOptions co;
      co.device = options.device;
      co.rounds = options.rounds;
      co.data_seed = options.train_data_seed;
      co.cache_dir = cache_dir;
      const ComparisonResult c =
          compare(seed, baseline.best_patch, seed, spec, patch, baseline.best_tuning, evolved_tuning, co);
      say(format_comparison(c));
      j = c.to_json();
      run.write_text("comparison_switches.json", j->dump(2) + "\n");
    }
    over_switches = ComparisonResult::from_json(*j);
  }

  // Stage 7: the results folder.
  // A results folder that has gone (a fresh checkout, a machine whose work
  // tree was reset) is written again from the run's records: no GPU work.
  if (const auto done = run.read_json("results.json"); done && fs::exists(done->value("folder", std::string())))
    return true;
  ResultRecord r;
  r.family = spec.family;
  r.kernel = seed.dir.filename().string();
  r.run_id = run.path().filename().string();
  r.date = comparison_json->value("date", utc_now_iso8601());
  r.versions = run.read_json("versions.json").value_or(versions_json(options.device));
  // What a developer adopts: both sides with their switches resolved, so the
  // kernel holds no dead path and the diff applies to the plain kernel.
  r.seed_source = variant_source(seed, grammar::Patch{}).source;
  r.evolved_source = variant_source(seed, patch).source;
  r.seed_has_switches = !seed.context.switches.empty();
  r.patch_text = grammar::to_string(patch);
  r.seed_sha256 = seed.sha256;
  r.comparison = comparison;
  r.over_switches = over_switches;
  r.validation = validation;
  r.edits = tuned_seed_kept ? nlohmann::json::array() : minimised.value("edits", nlohmann::json::array());
  if (tuned_seed_kept) r.search_best = search_best_summary(run);
  const fs::path written = write_result(evolved_root, r);
  run.write_text("results.json", nlohmann::json{{"folder", written.string()}, {"run_id", r.run_id}}.dump(2) + "\n");
  say("result written to " + written.string() + (comparison.review ? " (speed-up above 10x: flagged for review)" : ""));
  return true;
}

}  // namespace gi

#include "gi/run/post_evolution.hpp"

#include <cctype>
#include <optional>
#include <stdexcept>

#include "fitness/process/atomic_file.hpp"
#include "gi/publish/comparison.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/search/switch_baseline.hpp"
#include "gi/publish/results_writer.hpp"
#include "gi/publish/run_summary.hpp"
#include "gi/publish/validation.hpp"
#include "gi/publish/versions.hpp"
#include "gi/evaluate/variant_build.hpp"

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
static constexpr const char* kSwitchBestDir = "switch_best";
static constexpr const char* kTunedSeedDir = "tuned_seed";
static constexpr const char* kSetAsideMarker = "set_aside.json";
const char* const kFailedValidation = "it failed held-out validation or a sanitizer (its validation.json)";

const char* const kNotFaster = "the comparison's 95% lower bound of the speed-up over the tuned seed is not above 1";

void set_aside(RunDirectory& run, const std::string& dir, const std::string& reason) {
  const fs::path aside = run.path() / dir;
  fs::create_directories(aside);
  for (const char* name : kCandidateRecords)
    if (fs::exists(run.path() / name)) fs::rename(run.path() / name, aside / name);
  fitness::write_file_atomically(aside / kSetAsideMarker, nlohmann::json{{"reason", reason}}.dump(2) + "\n");
}


bool is_set_aside(RunDirectory& run, const std::string& dir) {
  const fs::path aside = run.path() / dir;
  if (!fs::exists(aside)) return false;
  // A call killed part way: what moved first tells why it moved (a rejected
  // candidate has no comparison to move).
  if (!fs::exists(aside / kSetAsideMarker)) {
    const bool compared = fs::exists(aside / "comparison.json") || fs::exists(run.path() / "comparison.json");
    set_aside(run, dir, compared ? kNotFaster : kFailedValidation);
  }
  return true;
}


std::vector<PublishCandidate> publish_candidates(const RunDirectory& run, const grammar::Patch& search_patch,
                                                 const Tuning& search_tuning, const Tuning& seed_tuning) {
  std::vector<PublishCandidate> ladder{{"the winner", kSearchBestDir, search_patch, search_tuning}};
  if (const auto j = run.read_json("switch_baseline.json")) {
    const SwitchBaseline baseline = SwitchBaseline::from_json(*j);
    // Retrying what already failed gains nothing: the winner may be the
    // switch setting itself (winner_retune gives way to it).
    const bool same_as_winner = grammar::to_string(baseline.best_patch) == grammar::to_string(search_patch) &&
                                baseline.best_tuning == search_tuning;
    if (!baseline.best_patch.edits.empty() && !same_as_winner)
      ladder.push_back({"the best switch setting", kSwitchBestDir, baseline.best_patch, baseline.best_tuning});
  }
  if (seed_tuning.options.empty()) {
    ladder.push_back({"the tuned seed", "", grammar::Patch{}, seed_tuning, true});
    return ladder;
  }
  Tuning without_options = seed_tuning;
  without_options.options.clear();
  ladder.push_back({"the tuned seed", kTunedSeedDir, grammar::Patch{}, seed_tuning, true});
  ladder.push_back({"the tuned seed without its compiler options", "", grammar::Patch{}, without_options, true});
  return ladder;
}

nlohmann::json set_aside_summary(const RunDirectory& run, const PublishCandidate& candidate) {
  const std::string& dir = candidate.aside_dir;
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
  if (!v) throw std::runtime_error((run.path() / dir).string() + ": neither a comparison nor a validation of the set-aside " +
                                   candidate.name);
  const ValidationResult validation = ValidationResult::from_json(*v);
  summary["patch"] = grammar::to_string(candidate.patch);
  summary["tuning"] = to_json(candidate.tuning);
  std::vector<std::string> rejected = validation.problems;
  for (const SanitizerResult* s : validation.sanitizers())
    if (s->status != "skipped" && !s->clear()) rejected.push_back("compute-sanitizer " + s->tool + ": " + s->status);
  summary["rejected"] = rejected;
  return summary;
}

// Whose records the top of the run holds: validation.json carries its
// candidate; a comparison names its patch and tuning.
static nlohmann::json candidate_stamp(const PublishCandidate& c) {
  return {{"patch", grammar::to_string(c.patch)}, {"tuning", to_json(c.tuning)}};
}

std::optional<std::string> stale_records(const RunDirectory& run, const PublishCandidate& candidate) {
  const nlohmann::json stamp = candidate_stamp(candidate);
  if (const auto v = run.read_json("validation.json"); v && v->contains("candidate") && v->at("candidate") != stamp)
    return "validation.json is for " + v->at("candidate").dump();
  if (const auto j = run.read_json("comparison.json")) {
    const ComparisonResult c = ComparisonResult::from_json(*j);
    if (c.patch != stamp.at("patch").get<std::string>() || !(c.evolved_tuning == candidate.tuning))
      return "comparison.json is for patch '" + c.patch + "' at " + to_json(c.evolved_tuning).dump();
  }
  return std::nullopt;
}

void supersede_records(RunDirectory& run, const std::string& why) {
  int n = 1;
  while (fs::exists(run.path() / ("superseded-" + std::to_string(n)))) ++n;
  const fs::path dir = run.path() / ("superseded-" + std::to_string(n));
  fs::create_directories(dir);
  fitness::write_file_atomically(dir / "why.json", nlohmann::json{{"reason", why}}.dump(2) + "\n");
  // results.json last: while it is at the top the stage looks finished.
  for (const char* name : {"validation.json", "comparison.json", "comparison_switches.json", "results.json"})
    if (fs::exists(run.path() / name)) fs::rename(run.path() / name, dir / name);
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

  // A candidate that fails validation or that the comparison does not show
  // faster than the tuned seed is set aside, and the next goes through
  // validation and the comparison in its place (publish_candidates).
  const std::vector<PublishCandidate> ladder = publish_candidates(run, search_patch, search_tuning, seed_tuning);
  std::size_t at = 0;
  while (at + 1 < ladder.size() && is_set_aside(run, ladder[at].aside_dir)) ++at;
  const PublishCandidate& candidate = ladder[at];
  const bool tuned_seed_kept = candidate.is_seed;
  // Records of another candidate (a run published under an older rule, then
  // published again) are kept aside, and this candidate is measured afresh.
  if (const auto why = stale_records(run, candidate)) {
    say("the run's records are not " + candidate.name + "'s (" + *why + "); they move to superseded-N/");
    supersede_records(run, *why + "; the candidate now is " + candidate.name);
  }
  const grammar::Patch& patch = candidate.patch;
  const Tuning& evolved_tuning = candidate.tuning;
  const fs::path gi_binary = options.gi_binary.empty() ? fs::read_symlink("/proc/self/exe") : options.gi_binary;
  const fs::path cache_dir = fs::absolute(options.cache_dir);

  // Stage 5: held-out validation and the sanitizers.
  std::optional<nlohmann::json> validation_json = run.read_json("validation.json");
  if (!validation_json) {
    say("validating " + candidate.name + " on " +
        std::to_string(spec.validate.size()) + " held-out workloads (twice each)...");
    ValidationOptions vo;
    vo.gi_binary = gi_binary;
    vo.device = options.device;
    vo.cache_dir = cache_dir;
    vo.sanitizers = options.sanitizers;
    vo.sanitizer_timeout = options.sanitizer_timeout;
    vo.log = options.say;
    validation_json = validate(seed, spec, patch, evolved_tuning, vo).to_json();
    (*validation_json)["candidate"] = candidate_stamp(candidate);
    run.write_text("validation.json", validation_json->dump(2) + "\n");
  }
  const ValidationResult validation = ValidationResult::from_json(*validation_json);
  bool valid = validation.passed;
  if (!valid) {
    say("validation FAILED:");
    for (const auto& p : validation.problems) say("  " + p);
  }
  for (const SanitizerResult* s : validation.sanitizers()) {
    if (s->status == "skipped") {
      say("compute-sanitizer " + s->tool + " skipped: " + s->reason);
    } else if (!s->clear()) {
      say("compute-sanitizer " + s->tool + " " + s->status + " (" + s->reason + "; " + s->summary + ")");
      valid = false;
    }
  }
  if (!valid) {
    // A rejected candidate is no improvement: the next takes its place, as
    // for one not shown faster. Only the last, the seed itself, failing
    // leaves nothing to publish.
    if (at + 1 == ladder.size()) {
      say("the tuned seed itself fails; nothing is published");
      return false;
    }
    say(candidate.name + " is set aside in " + candidate.aside_dir + "/ and " + ladder[at + 1].name +
        " is validated in its place");
    set_aside(run, candidate.aside_dir, kFailedValidation);
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
    // The seed is measured against itself at its own tuning: a tuning set
    // aside for failing validation is no reference.
    const Tuning& reference = tuned_seed_kept ? evolved_tuning : seed_tuning;
    const ComparisonResult c = compare(seed, spec, patch, reference, evolved_tuning, co);
    say(format_comparison(c));
    comparison_json = c.to_json();
    (*comparison_json)["date"] = utc_now_iso8601();
    run.write_text("comparison.json", comparison_json->dump(2) + "\n");
  }
  const ComparisonResult comparison = ComparisonResult::from_json(*comparison_json);
  if (!tuned_seed_kept && !shows_improvement(comparison)) {
    say(candidate.name + " is not shown faster than the tuned seed (lower bound " +
        std::to_string(comparison.speedup_ci_low) + "x); it is set aside in " + candidate.aside_dir + "/ and " +
        ladder[at + 1].name + " is tried in its place");
    set_aside(run, candidate.aside_dir, kNotFaster);
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
  // A library seed keeps the repository's name for it wherever gi ran.
  if (fs::absolute(seed.dir).lexically_normal().parent_path().parent_path().filename() != "seeds")
    r.seed_path = seed.display_path;
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
  r.edits = at == 0 ? minimised.value("edits", nlohmann::json::array()) : nlohmann::json::array();
  for (std::size_t i = 0; i < at; ++i)
    (ladder[i].aside_dir == kSearchBestDir   ? r.search_best
     : ladder[i].aside_dir == kSwitchBestDir ? r.switch_best
                                             : r.tuned_seed) = set_aside_summary(run, ladder[i]);
  if (at > 0) r.kept = candidate.name;
  r.run_summary = run_summary(run.path());
  const fs::path written = write_result(evolved_root, r);
  run.write_text("results.json", nlohmann::json{{"folder", written.string()}, {"run_id", r.run_id}}.dump(2) + "\n");
  say("result written to " + written.string() + (comparison.review ? " (speed-up above 10x: flagged for review)" : ""));
  return true;
}

}  // namespace gi

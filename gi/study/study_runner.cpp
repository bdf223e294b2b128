#include "gi/study/study_runner.hpp"

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "fitness/process/atomic_file.hpp"
#include "fitness/workload/kernel_spec.hpp"
#include "gi/publish/comparison.hpp"
#include "gi/publish/versions.hpp"
#include "gi/run/folder_lock.hpp"
#include "gi/run/run_directory.hpp"
#include "gi/search/edit_operators.hpp"
#include "gi/search/mutant_survey.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

constexpr const char* kStateFile = "study.json";
constexpr const char* kLockFile = ".study.lock";
constexpr const char* kFormat = "gi-study-1";
constexpr const char* kComparisonFile = "ablation_comparison.json";

struct StudyState {
  nlohmann::json plan;
  std::vector<StudyRun> runs;
};

void write_state(const fs::path& out, const StudyState& s) {
  nlohmann::json runs = nlohmann::json::array();
  for (const StudyRun& r : s.runs) runs.push_back(r.to_json());
  fitness::write_file_atomically(out / kStateFile,
                                 nlohmann::json{{"format", kFormat}, {"plan", s.plan}, {"runs", runs}}.dump(2) + "\n");
}

StudyState read_state(const fs::path& out) {
  const fs::path file = out / kStateFile;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text_file(file));
    if (j.value("format", std::string()) != kFormat) throw std::runtime_error(std::string("format: expected ") + kFormat);
    StudyState s;
    s.plan = j.at("plan");
    for (const auto& r : j.at("runs")) s.runs.push_back(StudyRun::from_json(r));
    return s;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what() + " (a damaged study: repair it or start another --out)");
  }
}

// Updates run i of the folder's state under the lock (several shards may share it).
void commit_run(const fs::path& out, std::size_t i, const StudyRun& run) {
  FolderLock lock(out / kLockFile);
  StudyState s = read_state(out);
  s.runs.at(i) = run;
  write_state(out, s);
}

const StudyCell& cell_of(const StudyPlan& plan, const std::string& name) {
  for (const StudyCell& c : plan.cells)
    if (c.name == name) return c;
  throw std::runtime_error("study.json: no cell named '" + name + "'");
}

// Whether the cell can search this seed: some family of it has an edit here.
// (switches_only on a seed without switches has nothing to search: its
// result is the seed's by definition, and running it would only fail.)
bool cell_applies(const StudyCell& cell, const Seed& seed) {
  if (!cell.search) return true;
  OperatorConfig operators;
  operators.enabled = parse_families(cell.families);
  operators.context = seed.context;
  operators.context.constants = mutant_constants(seed, nullptr);
  return !EditOperators(seed.grammar, operators).available().empty();
}

// The run's final kernel: what it published (comparison.json's patch and
// tuning), or the tuned seed when nothing was (a rejected run keeps the seed).
void final_kernel(const RunDirectory& run, grammar::Patch& patch, Tuning& tuning, const fitness::KernelSpec& spec) {
  if (const auto c = run.read_json("comparison.json")) {
    const ComparisonResult r = ComparisonResult::from_json(*c);
    patch = grammar::parse_patch(r.patch, (run.path() / "comparison.json").string());
    tuning = r.evolved_tuning;
    return;
  }
  patch = grammar::Patch{};
  tuning = Tuning{spec.default_block_size, {}};
}

}  // namespace

StudyBackend gpu_study_backend() {
  StudyBackend b;
  b.run_backend = [](const EvolveOptions& o) { return gpu_backend(o); };
  b.compare = [](const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& patch, const Tuning& seed_tuning,
                 const Tuning& tuning, const EvolveOptions& run) {
    ComparisonOptions co;
    co.device = run.device;
    co.cache_dir = fs::absolute(run.cache_dir);
    co.data_seed = tuning_data_seed(run.search.seed);
    return compare(seed, spec, patch, seed_tuning, tuning, co).to_json();
  };
  return b;
}

StudySummary run_study(const AblateOptions& o, const StudyBackend& backend) {
  const auto say = o.say ? o.say : [](const std::string& s) { std::cerr << s << std::endl; };
  const StudyPlan given = parse_study(read_text_file(o.study_file), o.study_file.string());
  fs::create_directories(o.out_dir);
  StudyState state;
  {
    FolderLock lock(o.out_dir / kLockFile);
    if (fs::exists(o.out_dir / kStateFile)) {
      state = read_state(o.out_dir);
      // More repeats extend a study (its new seeds' runs come after the
      // others); anything else it keeps.
      nlohmann::json stored = state.plan, wanted = given.to_json();
      const int had = stored.value("repeats", 0);
      stored.erase("repeats");
      wanted.erase("repeats");
      if (stored != wanted || given.repeats < had)
        throw std::runtime_error(o.study_file.string() + " differs from the plan of the study in " + o.out_dir.string() +
                                 " (a study keeps its plan, but for more repeats: give its own STUDY.json, or another --out)");
      if (given.repeats > had) {
        std::set<std::string> known;
        for (const StudyRun& r : state.runs) known.insert(r.run_dir);
        for (const StudyRun& r : expand_runs(given))
          if (!known.count(r.run_dir)) state.runs.push_back(r);
        state.plan = given.to_json();
        write_state(o.out_dir, state);
        say("the study grows from " + std::to_string(had) + " to " + std::to_string(given.repeats) + " repeats");
      }
      say("resuming the study in " + o.out_dir.string());
    } else {
      state.plan = given.to_json();
      state.runs = expand_runs(given);
      write_state(o.out_dir, state);
    }
  }
  const StudyPlan plan = StudyPlan::from_json(state.plan);
  for (const std::string& name : o.redo_cells) {
    cell_of(plan, name);  // names a cell of the study, or throws
    FolderLock lock(o.out_dir / kLockFile);
    state = read_state(o.out_dir);
    for (StudyRun& r : state.runs) {
      if (r.cell != name || r.status == "pending") continue;
      const fs::path dir = o.out_dir / r.run_dir;
      if (fs::exists(dir)) {
        int k = 1;
        while (fs::exists(dir.string() + ".superseded-" + std::to_string(k))) ++k;
        fs::rename(dir, dir.string() + ".superseded-" + std::to_string(k));
      }
      r.status = "pending";
      r.error.clear();
    }
    write_state(o.out_dir, state);
    say("cell " + name + ": its runs are made again");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto call_over = [&] {
    return o.max_minutes_this_call > 0 &&
           std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(60 * o.max_minutes_this_call);
  };

  const int n = static_cast<int>(state.runs.size());
  for (int i = 0; i < n; ++i) {
    StudyRun& r = state.runs[i];
    if (!o.shard.takes(i)) continue;
    if (r.status != "pending" && r.status != "running") continue;
    if (call_over()) break;
    const StudyCell& cell = cell_of(plan, r.cell);
    const std::string label = "[study " + std::to_string(i + 1) + "/" + std::to_string(n) + "] " + kernel_slug(r.kernel) +
                              " " + r.cell + " seed " + std::to_string(r.seed);
    try {
      const Seed seed = load_seed(r.kernel);
      if (!cell_applies(cell, seed)) {
        r.status = "not_applicable";
        r.error = "no family of '" + cell.families + "' has an edit in this seed";
        commit_run(o.out_dir, i, r);
        say(label + ": not applicable (" + r.error + ")");
        continue;
      }
      r.status = "running";
      commit_run(o.out_dir, i, r);
      EvolveOptions run = o.run;
      run.seed_dir = r.kernel;
      run.run_dir = o.out_dir / r.run_dir;
      run.resume = fs::exists(run.run_dir / "config.json");
      if (!run.resume) fs::create_directories(run.run_dir.parent_path());
      run.search.algorithm = cell.algorithm;
      run.search.population = cell.population > 0 ? cell.population : plan.population;
      run.search.generations = cell.generations > 0 ? cell.generations : plan.generations;
      run.search.seed = r.seed;
      run.search.data_every = 0;
      run.families = cell.families;
      run.launch_tuning = cell.launch_tuning;
      run.search_stage = cell.search;
      run.parameter_sweep = cell.parameter_sweep;
      run.timing_budget_seconds = plan.timing_budget_seconds;
      run.sanitizers = plan.sanitizers;
      run.evolved_root = o.out_dir / "evolved";
      run.stop_requested = call_over;
      run.say = [&](const std::string& s) { if (!o.run.quiet) say("  " + s); };
      say(label + (run.resume ? " (resumed)" : ""));
      const RunOutcome outcome = evolve(run, backend.run_backend(run));
      if (outcome == RunOutcome::InProgress) break;  // the call's time is up
      RunDirectory dir = RunDirectory::open(run.run_dir);
      if (!dir.read_json(kComparisonFile)) {
        const fitness::KernelSpec spec = fitness::load_kernel_spec(seed.dir);
        grammar::Patch patch;
        Tuning tuning;
        final_kernel(dir, patch, tuning, spec);
        say("  the final kernel against the seed at its default launch, interleaved...");
        nlohmann::json c = backend.compare(seed, spec, patch, Tuning{spec.default_block_size, {}}, tuning, run);
        c["date"] = utc_now_iso8601();
        dir.write_text(kComparisonFile, c.dump(2) + "\n");
      }
      r.status = outcome == RunOutcome::Complete ? "complete" : "rejected";
      r.error.clear();
    } catch (const std::exception& e) {
      r.status = "failed";
      r.error = e.what();
    }
    commit_run(o.out_dir, i, r);
    say(label + ": " + r.status + (r.error.empty() ? std::string() : " (" + r.error + ")"));
  }

  nlohmann::json results = collect_study_results(o.out_dir);
  fitness::write_file_atomically(o.out_dir / "study_results.json", results.dump(2) + "\n");
  StudySummary s;
  for (const auto& row : results.at("runs")) {
    const std::string status = row.at("status").get<std::string>();
    if (status == "complete") ++s.complete;
    else if (status == "rejected") ++s.rejected;
    else if (status == "failed") ++s.failed;
    else if (status == "not_applicable") ++s.not_applicable;
    else ++s.pending;
  }
  return s;
}

namespace {

std::vector<nlohmann::json> read_lines(const fs::path& file) {
  std::vector<nlohmann::json> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::parse_error&) {
      break;  // a line cut by a kill: the lines before it stand
    }
  }
  return out;
}

}  // namespace

nlohmann::json collect_study_results(const fs::path& out_dir) {
  StudyState state;
  {
    FolderLock lock(out_dir / kLockFile);
    state = read_state(out_dir);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const StudyRun& r : state.runs) {
    nlohmann::json row = {{"kernel", kernel_slug(r.kernel)}, {"seed_dir", r.kernel}, {"cell", r.cell},
                          {"seed", r.seed}, {"run_dir", r.run_dir}, {"status", r.status}};
    if (!r.error.empty()) row["error"] = r.error;
    const fs::path dir = out_dir / r.run_dir;
    if (fs::exists(dir / kComparisonFile)) {
      const nlohmann::json c = nlohmann::json::parse(read_text_file(dir / kComparisonFile));
      row["speedup"] = c.at("speedup");
      row["speedup_ci_low"] = c.at("speedup_ci_low");
      row["seed_ms"] = c.at("seed").at("median_ms");
      row["final_ms"] = c.at("evolved").at("median_ms");
      row["final_patch"] = c.value("patch", std::string());
      row["final_tuning"] = c.at("tuning").at("evolved");
    }
    // Time to the first improvement: the first generation whose best beats
    // the seed (the search accepts only what beats it beyond the noise margin).
    row["evaluations_to_first_improvement"] = nullptr;
    row["seconds_to_first_improvement"] = nullptr;
    const auto generations = read_lines(dir / "generations.jsonl");
    for (const auto& g : generations)
      if (g.value("speedup", 1.0) > 1.0) {
        row["evaluations_to_first_improvement"] = g.at("evaluations");
        row["seconds_to_first_improvement"] = g.at("search_seconds");
        break;
      }
    if (!generations.empty()) {
      row["evaluations"] = generations.back().at("evaluations");
      row["search_seconds"] = generations.back().at("search_seconds");
    }
    int variants = 0, valid = 0;
    for (const auto& e : read_lines(dir / "evaluations.jsonl")) {
      if (e.value("index", -1) < 0) continue;  // the seed's own measurement
      ++variants;
      valid += e.value("status", std::string()) == "ok";
    }
    row["variants"] = variants;
    row["valid_fraction"] = variants > 0 ? nlohmann::json(static_cast<double>(valid) / variants) : nlohmann::json(nullptr);
    rows.push_back(row);
  }
  return {{"format", "gi-study-results-1"}, {"plan", state.plan}, {"runs", rows}};
}

}  // namespace gi

#include "gi/run/evolve_all.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "fitness/process/atomic_file.hpp"
#include "gi/run/folder_lock.hpp"
#include "gi/publish/results_writer.hpp"
#include "gi/seed/seed.hpp"
#include "gi/library/seed_library.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "gi-evolve-all-1";
constexpr const char* kStateFile = "evolve_all.json";
constexpr const char* kLockFile = ".evolve_all.lock";

std::string kernel_name(const fs::path& root, const fs::path& seed_dir) {
  return seed_dir.lexically_relative(root).generic_string();
}

// What must be the same for a later call to continue this run, not start another.
nlohmann::json plan_json(const EvolveAllOptions& o) {
  SearchConfig search = o.run.search;
  search.budget_seconds = 60 * o.budget_per_kernel_minutes;
  return {{"kernels", o.kernels},
          {"budget_per_kernel_minutes", o.budget_per_kernel_minutes},
          {"search", to_json(search)},
          {"families", o.run.families},
          {"seeds_root", o.seeds_root.lexically_normal().generic_string()},
          {"evolved_root", o.run.evolved_root.lexically_normal().generic_string()},
          {"timing_budget_seconds", o.run.timing_budget_seconds}};
}

nlohmann::json to_json(const KernelTask& t) {
  nlohmann::json j = {{"kernel", t.kernel}, {"seed_dir", t.seed_dir}, {"run_dir", t.run_dir}, {"status", t.status}};
  if (!t.stage.empty()) j["stage"] = t.stage;
  if (!t.error.empty()) j["error"] = t.error;
  return j;
}

KernelTask task_from_json(const nlohmann::json& j) {
  KernelTask t;
  t.kernel = j.at("kernel").get<std::string>();
  t.seed_dir = j.at("seed_dir").get<std::string>();
  t.run_dir = j.at("run_dir").get<std::string>();
  t.status = j.at("status").get<std::string>();
  t.stage = j.value("stage", std::string());
  t.error = j.value("error", std::string());
  static const std::vector<std::string> known = {"pending", "running", "complete", "rejected", "failed"};
  if (std::find(known.begin(), known.end(), t.status) == known.end())
    throw std::runtime_error("status: expected pending, running, complete, rejected or failed, got '" + t.status + "'");
  return t;
}

struct PlanState {
  nlohmann::json plan;
  std::vector<KernelTask> tasks;
};

void write_state(const fs::path& out, const PlanState& s) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelTask& t : s.tasks) kernels.push_back(to_json(t));
  fitness::write_file_atomically(out / kStateFile,
                                 nlohmann::json{{"format", kFormat}, {"plan", s.plan}, {"kernels", kernels}}.dump(2) + "\n");
}

PlanState read_state(const fs::path& out) {
  const fs::path file = out / kStateFile;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_text_file(file));
    if (j.value("format", std::string()) != kFormat) throw std::runtime_error(std::string("format: expected ") + kFormat);
    PlanState s;
    s.plan = j.at("plan");
    std::size_t i = 0;
    for (const auto& k : j.at("kernels")) {
      try {
        s.tasks.push_back(task_from_json(k));
      } catch (const std::exception& e) {
        throw std::runtime_error("kernels[" + std::to_string(i) + "]: " + e.what());
      }
      ++i;
    }
    return s;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what() + " (a damaged plan: repair it or start another --out)");
  }
}

// The fields of two plans that differ, for the note a resumed call prints.
std::string differing_fields(const nlohmann::json& a, const nlohmann::json& b) {
  std::string out;
  for (const auto& [key, value] : a.items())
    if (!b.contains(key) || b.at(key) != value) out += (out.empty() ? "" : ", ") + key;
  return out;
}

void record_failure(KernelTask& task, const std::string& stage, const std::string& error) {
  task.status = "failed";
  task.stage = stage;
  task.error = error;
}

// The report's list of kernels with no published result: what a person
// reading evolved/<gpu>/ must know is missing, and why.
void write_failures(const fs::path& gpu_dir, const std::vector<KernelTask>& tasks) {
  nlohmann::json failures = nlohmann::json::array();
  for (const KernelTask& t : tasks) {
    if (t.status != "failed" && t.status != "rejected") continue;
    failures.push_back({{"kernel", t.kernel},
                        {"stage", t.status == "rejected" ? std::string("validation") : t.stage},
                        {"error", t.error},
                        {"run", t.run_dir}});
  }
  const fs::path file = gpu_dir / "failures.json";
  if (failures.empty() && !fs::exists(file)) return;
  fs::create_directories(gpu_dir);
  fitness::write_file_atomically(file, failures.dump(2) + "\n");
}

// Writes one kernel's entry into the folder's plan, which the processes of
// other shards update too: under the folder's lock, from the plan as it is
// on disk. The GPU folder's failures list and README are rewritten from the
// same state, so the last process to finish leaves them complete. Returns
// the plan as written.
PlanState commit_task(const fs::path& out, std::size_t i, const KernelTask& task, const fs::path& gpu_dir) {
  FolderLock lock(out / kLockFile);
  PlanState s = read_state(out);
  if (i >= s.tasks.size() || s.tasks[i].kernel != task.kernel)
    throw std::runtime_error((out / kStateFile).string() + ": kernels[" + std::to_string(i) + "] is not " + task.kernel +
                             " any more (the plan changed under this run)");
  s.tasks[i] = task;
  write_state(out, s);
  if (!gpu_dir.empty()) {
    write_failures(gpu_dir, s.tasks);
    // Publication rewrites the README too, but unlocked: two shards
    // publishing at once could each miss the other's new folder.
    if (task.status == "complete" && fs::exists(gpu_dir)) write_results_readme(gpu_dir);
  }
  return s;
}

std::string minutes_text(double seconds) {
  char buf[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  else
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}

}  // namespace

std::vector<fs::path> select_seeds(const fs::path& root, const std::string& patterns) {
  const std::vector<std::string> globs = kernel_globs(patterns);
  if (globs.empty()) throw std::runtime_error("--kernels: no pattern given");
  const std::vector<fs::path> all = find_seed_dirs(root);
  std::vector<fs::path> chosen;
  for (const std::string& g : globs) {
    bool matched = false;
    for (const fs::path& dir : all) {
      if (!kernel_matches(kernel_name(root, dir), g)) continue;
      matched = true;
      if (std::find(chosen.begin(), chosen.end(), dir) == chosen.end()) chosen.push_back(dir);
    }
    if (!matched) throw std::runtime_error("--kernels: '" + g + "' matches no seed under " + root.string() + " (gi list names them)");
  }
  // Library order, whatever the order of the patterns.
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::string evolve_all_progress(int index, int count, const std::string& kernel, const nlohmann::json& g,
                                int generations, double kernels_left_after_this, double budget_seconds,
                                const Shard& shard) {
  const double kernel_left = g.value("eta_seconds", 0.0);
  char buf[320];
  const std::string tag = shard.count > 1 ? " " + shard.label() : std::string();
  std::snprintf(buf, sizeof buf, "[evolve-all%s] kernel %d/%d %s  gen %d/%d  best %.3fx  search left %s (this kernel), %s (all%s; stages beside the search on top)",
                tag.c_str(), index, count, kernel.c_str(), g.value("generation", 0) + 1, generations, g.value("speedup", 1.0),
                minutes_text(kernel_left).c_str(), minutes_text(kernel_left + kernels_left_after_this * budget_seconds).c_str(),
                shard.count > 1 ? " of this shard" : "");
  return buf;
}

EvolveAllSummary evolve_all(const EvolveAllOptions& o, const std::function<RunBackend(const EvolveOptions&)>& backend_for) {
  const auto say = o.say ? o.say : [](const std::string& s) { std::cerr << s << std::endl; };
  if (o.out_dir.empty()) throw std::runtime_error("evolve-all: no output folder (--out)");
  if (!(o.budget_per_kernel_minutes > 0)) throw std::runtime_error("--budget-per-kernel: expected minutes above 0");

  PlanState state;
  fs::create_directories(o.out_dir);
  {
    // The first process of a sharded job writes the plan; the others read it.
    FolderLock lock(o.out_dir / kLockFile);
    if (fs::exists(o.out_dir / kStateFile)) {
      state = read_state(o.out_dir);
      const std::string differs = differing_fields(plan_json(o), state.plan);
      say("resuming " + o.out_dir.string() +
          (differs.empty() ? std::string() : " (its own plan is kept; the options given differ in: " + differs + ")"));
    } else {
      state.plan = plan_json(o);
      for (const fs::path& dir : select_seeds(o.seeds_root, o.kernels)) {
        KernelTask t;
        t.kernel = kernel_name(o.seeds_root, dir);
        t.seed_dir = dir.lexically_normal().generic_string();
        t.run_dir = t.kernel;
        std::replace(t.run_dir.begin(), t.run_dir.end(), '/', '-');
        state.tasks.push_back(t);
      }
      write_state(o.out_dir, state);
    }
  }
  if (o.shard.count > 1)
    say("[evolve-all " + o.shard.label() + "] this process takes kernels " + std::to_string(o.shard.index + 1) + ", " +
        std::to_string(o.shard.index + 1 + o.shard.count) + ", ... of the plan (shard from " + o.shard.source + ")");

  // Every kernel's run takes the plan's settings, never this call's.
  const nlohmann::json& plan = state.plan;
  EvolveOptions base = o.run;
  base.search = search_config_from_json(plan.at("search"));
  base.families = plan.at("families").get<std::string>();
  base.evolved_root = plan.at("evolved_root").get<std::string>();
  base.timing_budget_seconds = plan.at("timing_budget_seconds").get<double>();
  const double budget_seconds = base.search.budget_seconds;
  const fs::path gpu_dir = o.gpu_slug.empty() ? fs::path() : base.evolved_root / o.gpu_slug;
  const std::string tag = "[evolve-all" + (o.shard.count > 1 ? " " + o.shard.label() : std::string()) + "] ";

  const auto start = std::chrono::steady_clock::now();
  const auto call_over = [&] {
    if (!(o.max_minutes_this_call > 0)) return false;
    return std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(60 * o.max_minutes_this_call);
  };

  const int n = static_cast<int>(state.tasks.size());
  for (int i = 0; i < n; ++i) {
    if (!o.shard.takes(i)) continue;
    KernelTask& task = state.tasks[i];
    // A retry resumes the kernel's run: a rejected one re-enters publication,
    // which may go differently under newer rules (a rejected winner now gives
    // way to the best switch setting, then the tuned seed), a failed one its
    // failed stage.
    const bool recorded = task.status == "failed" || task.status == "rejected";
    if (task.status == "complete" || (recorded && !o.retry_failed)) continue;
    if (call_over()) break;
    int later = 0;
    for (int k = i + 1; k < n; ++k)
      later += o.shard.takes(k) && (state.tasks[k].status == "pending" || state.tasks[k].status == "running");

    task.status = "running";
    task.stage.clear();
    task.error.clear();
    commit_task(o.out_dir, i, task, fs::path());
    say(tag + "kernel " + std::to_string(i + 1) + "/" + std::to_string(n) + " " + task.kernel + " (" +
        (fs::exists(o.out_dir / task.run_dir / "config.json") ? "resumed" : "started") + ")");

    EvolveOptions run = base;
    run.seed_dir = task.seed_dir;
    run.run_dir = o.out_dir / task.run_dir;
    run.resume = fs::exists(run.run_dir / "config.json");
    run.stop_requested = call_over;
    run.say = [&](const std::string& s) { if (!o.run.quiet) say("  " + s); };
    run.on_generation = [&, i, later](const nlohmann::json& g) {
      say(evolve_all_progress(i + 1, n, task.kernel, g, base.search.generations, later, budget_seconds, o.shard));
    };
    try {
      const RunOutcome outcome = evolve(run, backend_for(run));
      if (outcome == RunOutcome::InProgress) break;  // the call's time is up; the next call goes on from here
      task.status = outcome == RunOutcome::Complete ? "complete" : "rejected";
      if (outcome == RunOutcome::Rejected) task.error = "the winner failed held-out validation or a sanitizer; validation.json says why";
    } catch (const StageError& e) {
      record_failure(task, e.stage(), e.what());
    } catch (const std::runtime_error& e) {
      record_failure(task, "setup", e.what());
    } catch (const std::logic_error& e) {
      record_failure(task, "setup", e.what());
    }
    commit_task(o.out_dir, i, task, gpu_dir);
    say(tag + "kernel " + std::to_string(i + 1) + "/" + std::to_string(n) + " " + task.kernel + ": " + task.status +
        (task.error.empty() ? std::string() : " (" + task.error + ")"));
  }

  PlanState now;
  {
    FolderLock lock(o.out_dir / kLockFile);
    now = read_state(o.out_dir);
  }
  EvolveAllSummary summary;
  for (std::size_t i = 0; i < now.tasks.size(); ++i) {
    const KernelTask& t = now.tasks[i];
    if (t.status == "complete") ++summary.complete;
    else if (t.status == "rejected") ++summary.rejected;
    else if (t.status == "failed") ++summary.failed;
    else {
      ++summary.pending;
      summary.shard_pending += o.shard.takes(static_cast<int>(i));
    }
  }
  return summary;
}

}  // namespace gi

#include "gi/publish/validation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fitness/compile/cuda_toolkit.hpp"
#include "fitness/process/atomic_file.hpp"
#include "fitness/workload/plan_io.hpp"
#include "fitness/process/worker.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/evaluate/variant_build.hpp"
#include "gi/evaluate/seed_reference.hpp"

namespace gi {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

fitness::RunStatus run_status_from_string(const std::string& text) {
  using fitness::RunStatus;
  for (RunStatus s : {RunStatus::Ok, RunStatus::WrongOutput, RunStatus::LaunchError, RunStatus::Timeout,
                      RunStatus::IllegalAddress, RunStatus::Trap, RunStatus::GuardViolation, RunStatus::InputModified,
                      RunStatus::LoadError})
    if (fitness::to_string(s) == text) return s;
  throw std::runtime_error("validation.json: unknown run status '" + text + "'");
}

nlohmann::json check_json(const fitness::CheckReport& c) {
  return {{"status", fitness::to_string(c.status)}, {"max_abs_error", finite(c.max_abs_error)},
          {"max_rel_error", finite(c.max_rel_error)}, {"rms_error", finite(c.rms_error)},
          {"values_checked", c.values_checked}, {"output_digest", c.output_digest}, {"message", c.message}};
}

fitness::CheckReport check_from_json(const nlohmann::json& j) {
  fitness::CheckReport c;
  c.status = run_status_from_string(j.at("status").get<std::string>());
  c.max_abs_error = number_or(j, "max_abs_error", std::numeric_limits<double>::infinity());
  c.max_rel_error = number_or(j, "max_rel_error", std::numeric_limits<double>::infinity());
  c.rms_error = number_or(j, "rms_error", std::numeric_limits<double>::infinity());
  c.values_checked = j.at("values_checked").get<std::size_t>();
  c.output_digest = j.at("output_digest").get<std::string>();
  c.message = j.at("message").get<std::string>();
  return c;
}

std::string tail_of(const std::string& text, std::size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// Runs `command` through /bin/sh with stderr joined to stdout; returns the
// exit code (128 + signal for a signal) and fills `output`.
int run_capturing(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) {
    output.append(buffer, n);
    // Keep the end only: a sanitizer that finds an error in every thread
    // can print gigabytes, and the summary is at the end.
    if (output.size() > (std::size_t{4} << 20)) output.erase(0, output.size() - (std::size_t{1} << 20));
  }
  const int status = ::pclose(pipe);
  if (status == -1) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Checked runs of the plain seed on `plan_file` (loaded into the worker in
// place of the variant's plan) left different outputs: its float atomics vary
// from run to run on this data. Every run must pass. Up to kSeedRuns runs,
// stopping at the first that differs: two runs of a seed whose atomics
// reorder can agree by chance (seen on an H200: the plain sum reduction's two
// runs agreed on one held-out workload and its own unmodified kernel was
// rejected for varying there).
constexpr int kSeedRuns = 6;

bool seed_varies(fitness::WorkerProcess& worker, const fs::path& plan_file, const fs::path& cubin,
                 const std::string& entry, fitness::EvalRequest request) {
  const fitness::WorkerReply loaded = worker.load_plan(plan_file);
  if (loaded.request_failed || loaded.worker_died || loaded.status != fitness::RunStatus::Ok) return false;
  request.cubin_file = cubin;
  request.entry = entry;
  std::string first;
  for (int run = 0; run < kSeedRuns; ++run) {
    const fitness::WorkerReply reply = worker.eval(request);
    const fitness::CheckReport report = reply.check_report();
    if (reply.request_failed || !report.ok() || report.output_digest.empty()) return false;
    if (run == 0) first = report.output_digest;
    else if (report.output_digest != first) return true;
  }
  return false;
}

}  // namespace

WorkloadCheck judge_workload(std::string which, fitness::CheckReport first, fitness::CheckReport second,
                             bool seed_varies) {
  WorkloadCheck w;
  w.which = std::move(which);
  w.values_checked = first.values_checked;
  w.identical = !first.output_digest.empty() && first.output_digest == second.output_digest;
  if (!first.ok()) {
    w.message = "first run: " + fitness::to_string(first.status) + ": " + first.message;
  } else if (!second.ok()) {
    w.message = "second run: " + fitness::to_string(second.status) + ": " + second.message;
  } else if (first.output_digest.empty() || second.output_digest.empty()) {
    w.message = "no output digest: the two runs cannot be compared";
  } else if (!w.identical && !seed_varies) {
    w.message = "the two runs left different outputs (digest " + first.output_digest + " then " +
                second.output_digest + ")";
  } else if (first.values_checked != second.values_checked) {
    w.message = "the two runs checked different numbers of values (" + std::to_string(first.values_checked) +
                " then " + std::to_string(second.values_checked) + ")";
  } else {
    w.passed = true;
    w.varies_like_seed = !w.identical;
    if (w.varies_like_seed)
      w.message = "the two runs left different outputs (digest " + first.output_digest + " then " +
                  second.output_digest + "), as runs of the plain seed do (its atomics reorder); both within tolerance";
  }
  w.first = std::move(first);
  w.second = std::move(second);
  return w;
}

WorkloadCheck failed_workload(std::string which, std::string message) {
  WorkloadCheck w;
  w.which = std::move(which);
  w.message = std::move(message);
  w.first.status = w.second.status = fitness::RunStatus::LaunchError;
  w.first.message = w.second.message = w.message;
  return w;
}

void summarize_validation(ValidationResult& r) {
  r.output_values = r.input_values = 0;
  r.max_abs_error = r.max_rel_error = 0;
  r.problems.clear();
  bool all_passed = true;
  for (const WorkloadCheck& w : r.workloads) {
    r.output_values += w.values_checked;
    r.input_values += w.input_values;
    for (const fitness::CheckReport* c : {&w.first, &w.second}) {
      if (c->values_checked == 0) continue;  // never ran: its zero errors say nothing
      r.max_abs_error = std::max(r.max_abs_error, c->max_abs_error);
      r.max_rel_error = std::max(r.max_rel_error, c->max_rel_error);
    }
    if (!w.passed) {
      all_passed = false;
      r.problems.push_back(w.which + ": " + w.message);
    }
  }
  if (r.workloads.size() < kMinValidationWorkloads)
    r.problems.push_back("only " + std::to_string(r.workloads.size()) + " validation workloads; at least " +
                         std::to_string(kMinValidationWorkloads) + " are required");
  const bool enough = r.output_values >= kMinValidationValues || r.input_values >= kMinValidationValues;
  if (!enough)
    r.problems.push_back("only " + std::to_string(r.output_values) + " output values checked (on " +
                         std::to_string(r.input_values) + " input values); at least " +
                         std::to_string(kMinValidationValues) + " of either are required");
  r.passed = all_passed && r.workloads.size() >= kMinValidationWorkloads && enough;
}

nlohmann::json SanitizerResult::to_json() const {
  return {{"tool", tool}, {"status", status}, {"workload", workload}, {"summary", summary}, {"reason", reason},
          {"exit_code", exit_code}, {"seconds", seconds}, {"command", command}, {"output_tail", output_tail}};
}

SanitizerResult SanitizerResult::from_json(const nlohmann::json& j) {
  SanitizerResult s;
  s.tool = j.at("tool").get<std::string>();
  s.status = j.at("status").get<std::string>();
  s.workload = j.value("workload", "");
  s.summary = j.value("summary", "");
  s.reason = j.value("reason", "");
  s.exit_code = j.value("exit_code", -1);
  s.seconds = j.value("seconds", 0.0);
  s.command = j.value("command", "");
  s.output_tail = j.value("output_tail", "");
  return s;
}

nlohmann::json ValidationResult::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const WorkloadCheck& w : workloads)
    list.push_back({{"workload", w.which}, {"values_checked", w.values_checked}, {"input_values", w.input_values},
                    {"passed", w.passed}, {"identical", w.identical}, {"varies_like_seed", w.varies_like_seed},
                    {"message", w.message},
                    {"runs", {check_json(w.first), check_json(w.second)}}});
  return {{"workloads", workloads.size()},
          {"output_values", output_values},
          {"input_values", input_values},
          {"max_abs_error", finite(max_abs_error)},
          {"max_rel_error", finite(max_rel_error)},
          {"passed", passed},
          {"problems", problems},
          {"required", {{"output_values", kMinValidationValues}, {"workloads", kMinValidationWorkloads}}},
          {"per_workload", list},
          {"sanitizer", {{"memcheck", memcheck.to_json()},
                         {"racecheck", racecheck.to_json()},
                         {"synccheck", synccheck.to_json()},
                         {"initcheck", initcheck.to_json()}}}};
}

ValidationResult ValidationResult::from_json(const nlohmann::json& j) {
  ValidationResult r;
  for (const auto& w : j.at("per_workload")) {
    WorkloadCheck c;
    c.which = w.at("workload").get<std::string>();
    c.values_checked = w.at("values_checked").get<std::size_t>();
    c.passed = w.at("passed").get<bool>();
    c.identical = w.at("identical").get<bool>();
    c.input_values = w.value("input_values", std::size_t{0});
    c.varies_like_seed = w.value("varies_like_seed", false);
    c.message = w.at("message").get<std::string>();
    c.first = check_from_json(w.at("runs").at(0));
    c.second = check_from_json(w.at("runs").at(1));
    r.workloads.push_back(std::move(c));
  }
  summarize_validation(r);
  r.memcheck = SanitizerResult::from_json(j.at("sanitizer").at("memcheck"));
  r.racecheck = SanitizerResult::from_json(j.at("sanitizer").at("racecheck"));
  // Validations from before gi ran them had no kernel that needed them.
  for (auto [tool, result] : {std::pair{"synccheck", &r.synccheck}, std::pair{"initcheck", &r.initcheck}}) {
    if (j.at("sanitizer").contains(tool)) {
      *result = SanitizerResult::from_json(j.at("sanitizer").at(tool));
    } else {
      result->tool = tool;
      result->status = "not needed";
      result->reason = "validated before gi ran " + std::string(tool);
    }
  }
  return r;
}

std::optional<fs::path> find_compute_sanitizer() {
  auto executable = [](const fs::path& p) { return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); };
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      if (!dir.empty() && executable(fs::path(dir) / "compute-sanitizer")) return fs::path(dir) / "compute-sanitizer";
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  for (const fs::path& root : fitness::cuda_toolkit_roots())
    if (executable(root / "bin" / "compute-sanitizer")) return root / "bin" / "compute-sanitizer";
  return std::nullopt;
}

std::string sanitizer_summary_line(std::string_view output) {
  std::string found;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    if (line.find("SUMMARY:") != std::string_view::npos) {
      while (!line.empty() && (line.front() == '=' || line.front() == ' ')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
      found = std::string(line);
    }
    start = end + 1;
  }
  return found;
}

SanitizerResult judge_sanitizer(const std::string& tool, int exit_code, const std::string& output) {
  SanitizerResult s;
  s.tool = tool;
  s.exit_code = exit_code;
  s.summary = sanitizer_summary_line(output);
  s.output_tail = tail_of(output, 4000);
  if (exit_code == 124 || exit_code == 137) {
    s.status = "timed out";
    s.reason = "did not finish within its time limit";
  } else if (exit_code == 0 && !s.summary.empty()) {
    s.status = "passed";
  } else {
    s.status = "failed";
    s.reason = exit_code == 9 ? "the sanitizer reported errors"
               : exit_code == 0 ? "exit code 0 but no summary line: did the sanitizer run?"
                                : "exit code " + std::to_string(exit_code) + " (gi check failed or could not run)";
  }
  return s;
}

std::size_t pick_sanitizer_workload(const std::vector<std::size_t>& checked_values, std::size_t min_values) {
  if (checked_values.empty()) throw std::invalid_argument("no validation workload to run a sanitizer on");
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < checked_values.size(); ++i)
    if (checked_values[i] >= min_values && (!best || checked_values[i] < checked_values[*best])) best = i;
  if (best) return *best;
  return static_cast<std::size_t>(std::max_element(checked_values.begin(), checked_values.end()) -
                                  checked_values.begin());
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool adds_barriers_or_shared_memory(const std::string& seed_source, const std::string& variant_source) {
  auto count = [](const std::string& text, const std::string& word) {
    std::size_t n = 0;
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + word.size())) ++n;
    return n;
  };
  for (const char* word : {"__syncthreads", "__shared__", "__syncwarp"})
    if (count(variant_source, word) > count(seed_source, word)) return true;
  return false;
}

SanitizerResult run_sanitizer(const std::string& tool, const Seed& seed, const grammar::Patch& patch,
                              const Tuning& tuning, const std::string& workload, const ValidationOptions& options,
                              const fs::path& scratch) {
  const auto say = [&](const std::string& s) {
    if (options.log) options.log(s);
  };
  SanitizerResult s;
  s.tool = tool;
  s.workload = workload;
  const std::optional<fs::path> sanitizer = find_compute_sanitizer();
  if (!sanitizer) {
    s.status = "skipped";
    s.reason = "compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
    return s;
  }
  // API calls that fail on purpose (GpuRunner probes the kernel's parameter
  // count with cuFuncGetParamInfo one past the end) are handled by gi and are
  // not what is checked here: --report-api-errors no.
  const fs::path patch_file = scratch / "patch.gi";
  fitness::write_file_atomically(patch_file, patch_file_for(seed, patch));
  std::string command = "timeout -k 10 " + std::to_string(options.sanitizer_timeout.count()) + " " +
                        shell_quote(sanitizer->string()) + " --tool " + tool + " --report-api-errors no --error-exitcode 9 " +
                        shell_quote(options.gi_binary.string()) + " check " +
                        shell_quote(fs::absolute(seed.dir).string()) + " --patch " + shell_quote(patch_file.string()) +
                        " --workload " + workload + " --block " + std::to_string(tuning.block_size) + " --device " +
                        std::to_string(options.device) + " --data-seed " + std::to_string(options.data_seed) +
                        // A kernel under racecheck runs many times slower: the launch may take as long as the tool.
                        " --timeout-ms " + std::to_string(1000 * options.sanitizer_timeout.count());
  for (const std::string& o : tuning.options) command += " " + shell_quote("--option=" + o);
  if (options.cache_dir) command += " --cache " + shell_quote(options.cache_dir->string());
  say("  compute-sanitizer " + tool + " on " + workload + "...");
  const auto start = Clock::now();
  std::string output;
  const int code = run_capturing(command, output);
  s = judge_sanitizer(tool, code, output);
  s.workload = workload;
  s.command = command;
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  say("  " + tool + ": " + s.status + (s.summary.empty() ? "" : " (" + s.summary + ")"));
  return s;
}

ValidationResult validate(const Seed& seed, const fitness::KernelSpec& spec, const grammar::Patch& patch,
                          const Tuning& tuning, const ValidationOptions& options) {
  auto say = [&](const std::string& s) {
    if (options.log) options.log(s);
  };
  ValidationResult result;
  result.memcheck.tool = "memcheck";
  result.racecheck.tool = "racecheck";
  result.synccheck.tool = "synccheck";
  result.initcheck.tool = "initcheck";
  const fs::path scratch = (options.cache_dir ? *options.cache_dir : fs::temp_directory_path()) /
                           ("validate-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};

  const BuiltVariant built = compile_variant(seed, patch, tuning, device_arch(options.device), options.cache_dir);
  const fitness::CompileResult& binary = built.binary;
  if (!binary.ok) {
    for (std::size_t i = 0; i < spec.validate.size(); ++i)
      result.workloads.push_back(failed_workload("validate:" + std::to_string(i), "does not compile: " + binary.error));
    summarize_validation(result);
    return result;
  }
  const fs::path cubin = scratch / "variant.cubin";
  fitness::write_file_atomically(cubin, std::string_view(binary.cubin.data(), binary.cubin.size()));
  const std::optional<fs::path> reference_cache =
      options.cache_dir ? std::optional<fs::path>(*options.cache_dir / "reference") : std::nullopt;

  // The plain seed, at its default block size: run twice where the variant's
  // two runs differ, to tell float atomics (the seed varies too) from a race.
  const BuiltVariant plain = compile_variant(seed, grammar::Patch{}, Tuning{spec.default_block_size, {}},
                                             device_arch(options.device), options.cache_dir);
  const fs::path plain_cubin = scratch / "plain.cubin";
  if (plain.binary.ok)
    fitness::write_file_atomically(plain_cubin, std::string_view(plain.binary.cubin.data(), plain.binary.cubin.size()));

  use_seed_as_reference(seed, spec, options.device, options.cache_dir);
  fitness::WorkerProcess worker(options.gi_binary.string(), {"worker", "--device", std::to_string(options.device)});
  worker.start();
  // Once the seed has varied on one workload its outputs depend on the order
  // of its atomics, so variation on another is no sign of a race either.
  bool seed_seen_varying = false;
  for (std::size_t i = 0; i < spec.validate.size(); ++i) {
    const std::string which = "validate:" + std::to_string(i);
    try {
      const fs::path plan_file = scratch / "plan.bin";
      const fs::path plain_plan_file = scratch / "plain-plan.bin";
      std::size_t input_values = 0;
      {
        fitness::PreparedWorkload work =
            fitness::prepare_workload(spec, which, options.data_seed, reference_cache, tuning.block_size);
        input_values = fitness::input_values(work.plan);
        fitness::set_launch_geometry(work.plan, spec, work.variables, tuning.block_size, built.launch);
        fitness::save_plan(plan_file, work.plan, work.expected, work.tolerance);
        fitness::set_launch_geometry(work.plan, spec, work.variables, spec.default_block_size, plain.launch);
        fitness::save_plan(plain_plan_file, work.plan, work.expected, work.tolerance);
      }
      const fitness::WorkerReply loaded = worker.load_plan(plan_file);
      if (loaded.request_failed || loaded.worker_died || loaded.status != fitness::RunStatus::Ok) {
        result.workloads.push_back(failed_workload(which, "the worker could not load the workload: " + loaded.message));
        continue;
      }
      fitness::EvalRequest request;
      request.cubin_file = cubin;
      request.entry = spec.entry;
      request.check = true;
      request.time = false;
      request.kernel_timeout = options.kernel_timeout;
      std::vector<fitness::CheckReport> runs;
      std::string refused;
      for (int run = 0; run < 2; ++run) {
        const fitness::WorkerReply reply = worker.eval(request);
        if (reply.request_failed) refused = reply.message;
        runs.push_back(reply.check_report());
      }
      if (!refused.empty()) {
        result.workloads.push_back(failed_workload(which, "the worker refused the check: " + refused));
      } else {
        // Judged as if the seed varied: passing only that way means the two
        // runs differ and nothing else is wrong; then the plain seed decides.
        WorkloadCheck w = judge_workload(which, runs[0], runs[1], true);
        if (w.varies_like_seed && !seed_seen_varying) {
          seed_seen_varying =
              plain.binary.ok && seed_varies(worker, plain_plan_file, plain_cubin, spec.entry, request);
          if (!seed_seen_varying) w = judge_workload(which, runs[0], runs[1]);
        }
        w.input_values = input_values;
        result.workloads.push_back(std::move(w));
      }
    } catch (const std::exception& e) {
      result.workloads.push_back(failed_workload(which, e.what()));
    }
    const WorkloadCheck& w = result.workloads.back();
    say("  " + which + ": " + (w.passed ? "ok" : "FAILED: " + w.message) + " (" + std::to_string(w.values_checked) +
        " values, digest " + w.first.output_digest + ")");
  }
  worker.stop();
  summarize_validation(result);

  // compute-sanitizer: `gi check` in a process of its own on one workload.
  std::vector<std::size_t> values;
  for (const WorkloadCheck& w : result.workloads) values.push_back(w.values_checked);
  const bool adds = adds_barriers_or_shared_memory(variant_source(seed, grammar::Patch{}).source,
                                                  variant_source(seed, patch).source);
  for (SanitizerResult* s : {&result.memcheck, &result.racecheck, &result.synccheck, &result.initcheck}) {
    if ((s == &result.synccheck || s == &result.initcheck) && !adds) {
      s->status = "not needed";
      s->reason = "the variant adds no barrier and no shared memory";
      continue;
    }
    if (!options.sanitizers) {
      s->status = "skipped";
      s->reason = "sanitizer runs switched off";
      continue;
    }
    if (values.empty()) {
      s->status = "skipped";
      s->reason = "the spec has no validation workload";
      continue;
    }
    const std::string workload = "validate:" + std::to_string(pick_sanitizer_workload(values, options.sanitizer_min_values));
    *s = run_sanitizer(s->tool, seed, patch, tuning, workload, options, scratch);
  }
  return result;
}

}  // namespace gi

#include "fitness/gpu/worker_loop.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "fitness/gpu/gpu_runner.hpp"
#include "fitness/process/json_line_server.hpp"
#include "fitness/process/worker.hpp"
#include "fitness/workload/plan_io.hpp"

namespace gi::fitness {

using json = nlohmann::json;

namespace {

bool is_fatal(RunStatus s) {
  return s == RunStatus::Timeout || s == RunStatus::IllegalAddress || s == RunStatus::Trap;
}

// A JSON number, or null for infinity/NaN (which JSON cannot hold).
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open module file " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes;
}

// One loaded plan and the geometry it came with (an eval may override it).
struct Slot {
  PlanBundle bundle;
  std::string entry;
  std::array<unsigned, 3> grid{}, block{};
  std::size_t shared_bytes = 0;
};

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

class WorkerState {
 public:
  explicit WorkerState(int device) : device_(device) {}

  json handle(const json& request) {
    const std::string cmd = request.value("cmd", "");
    if (cmd == "ping") return {{"status", "ok"}, {"pid", static_cast<long>(::getpid())}};
    if (cmd == "load_plan") return load_plan(request);
    if (cmd == "unload") return unload(request);
    if (cmd == "eval") return eval(request);
    return error_reply("unknown cmd '" + cmd + "' (ping, load_plan, unload, eval, quit)");
  }

 private:
  GpuRunner& runner() {
    if (!runner_) runner_ = std::make_unique<GpuRunner>(device_);
    return *runner_;
  }

  std::vector<std::string> slot_names() const {
    std::vector<std::string> names;
    for (const auto& [name, slot] : slots_) names.push_back(name);
    return names;
  }

  // Forgets a slot and frees its device memory.
  void drop(const std::string& name) {
    slots_.erase(name);
    if (runner_) runner_->release(name);
  }

  json load_plan(const json& request) {
    if (!request.contains("plan_file") || !request["plan_file"].is_string())
      return error_reply("load_plan needs \"plan_file\": a path");
    std::string name = kDefaultPlanSlot;
    if (request.contains("slot")) {
      if (!request["slot"].is_string()) return error_reply("load_plan: \"slot\" must be a string");
      name = request["slot"].get<std::string>();
      if (const std::string problem = slot_name_problem(name); !problem.empty())
        return error_reply("load_plan: slot: " + problem);
    }
    try {
      runner();  // no GPU: say so before reading a large file
      // The old plan goes first: the device never holds two of a slot's plans.
      drop(name);
      auto slot = std::make_unique<Slot>();
      slot->bundle = gi::fitness::load_plan(request["plan_file"].get<std::string>());
      slot->entry = slot->bundle.plan.entry;
      slot->grid = slot->bundle.plan.grid;
      slot->block = slot->bundle.plan.block;
      slot->shared_bytes = slot->bundle.plan.dynamic_shared_bytes;
      runner().prepare(slot->bundle.plan, name);
      slots_[name] = std::move(slot);
    } catch (const std::exception& e) {
      drop(name);
      return error_reply("load_plan into slot '" + name + "': " + e.what());
    }
    const Slot& slot = *slots_.at(name);
    return {{"status", "ok"},
            {"slot", name},
            {"buffers", slot.bundle.plan.buffers.size()},
            {"references", slot.bundle.expected.size()},
            {"device", runner().device_name()}};
  }

  json unload(const json& request) {
    if (!request.contains("slot") || !request["slot"].is_string())
      return error_reply("unload needs \"slot\": the name of a loaded slot");
    const std::string name = request["slot"].get<std::string>();
    if (slots_.count(name) == 0)
      return error_reply("unload: slot '" + name + "' is not loaded (loaded: " + joined(slot_names()) + ")");
    drop(name);
    return {{"status", "ok"}, {"slots", slot_names()}};
  }

  // The slot's plan with the geometry an eval asks for.
  LaunchPlan& plan_for(const SlotRun& run, const std::string& entry) {
    Slot& slot = *slots_.at(run.slot);
    LaunchPlan& plan = slot.bundle.plan;
    plan.entry = entry;
    plan.grid = run.grid.value_or(slot.grid);
    plan.block = run.block.value_or(slot.block);
    plan.dynamic_shared_bytes = run.shared_bytes.value_or(slot.shared_bytes);
    return plan;
  }

  json eval(const json& request) {
    EvalRequest r;
    try {
      r = eval_request_from_json(request);
    } catch (const std::invalid_argument& e) {
      return error_reply(e.what());
    }
    if (slots_.empty()) return error_reply("eval before load_plan");
    const std::vector<SlotRun> runs = slots_checked(r);
    for (const SlotRun& run : runs)
      if (slots_.count(run.slot) == 0)
        return error_reply("eval: slot '" + run.slot + "' is not loaded (loaded: " + joined(slot_names()) + ")");
    const std::string entry = r.entry.empty() ? slots_.at(runs.front().slot)->entry : r.entry;
    std::vector<char> image;
    try {
      runner().set_kernel_timeout(r.kernel_timeout);
      image = read_file(r.cubin_file.string());
      image.push_back('\0');  // PTX text must end in NUL; a cubin ignores it
    } catch (const std::exception& e) {
      return error_reply(e.what());
    }

    json reply = {{"status", "ok"}, {"fatal", false}};
    // Where an evaluation's time goes, for the engine benchmark.
    const auto phase_start = std::chrono::steady_clock::now();
    auto ms_since = [](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
    };
    json phases = json::object();
    LoadResult loaded = runner().load(image, entry);
    phases["load_ms"] = ms_since(phase_start);
    if (!loaded.ok()) {
      reply["status"] = to_string(loaded.status);
      reply["message"] = loaded.message;
      return reply;
    }
    RunStatus status = RunStatus::Ok;
    std::string current_slot;  // where a failure happened
    try {
      if (r.check) {
        const auto check_start = std::chrono::steady_clock::now();
        json checks = json::array();
        double max_abs = 0, max_rel = 0, sum_squares = 0;
        std::size_t values = 0;
        std::string digests;
        // The first failure decides: the later slots are not run.
        for (const SlotRun& run : runs) {
          current_slot = run.slot;
          const Slot& slot = *slots_.at(run.slot);
          const CheckReport check = runner().run_checked(*loaded.kernel, plan_for(run, entry), slot.bundle.expected,
                                                         slot.bundle.tolerance, run.slot);
          checks.push_back({{"slot", run.slot},
                            {"status", to_string(check.status)},
                            {"message", check.message},
                            {"values_checked", check.values_checked},
                            {"max_abs", finite_or_null(check.max_abs_error)},
                            {"max_rel", finite_or_null(check.max_rel_error)},
                            {"rms", finite_or_null(check.rms_error)},
                            {"output_digest", check.output_digest}});
          max_abs = std::max(max_abs, check.max_abs_error);
          max_rel = std::max(max_rel, check.max_rel_error);
          sum_squares += check.rms_error * check.rms_error * static_cast<double>(check.values_checked);
          values += check.values_checked;
          digests += (digests.empty() ? "" : ",") + check.output_digest;
          if (!check.ok()) {
            status = check.status;
            reply["message"] = check.message;
            reply["failed_slot"] = run.slot;
            break;
          }
        }
        reply["checks"] = checks;
        reply["max_abs"] = finite_or_null(max_abs);
        reply["max_rel"] = finite_or_null(max_rel);
        reply["rms"] = finite_or_null(values > 0 ? std::sqrt(sum_squares / static_cast<double>(values)) : 0.0);
        reply["values_checked"] = values;
        reply["output_digest"] = digests;
        phases["check_ms"] = ms_since(check_start);
      }
      // A wrong variant is not worth timing.
      if (status == RunStatus::Ok && r.time) {
        const std::string timed = timed_slot(r);
        current_slot = timed;
        const SlotRun& run = *std::find_if(runs.begin(), runs.end(), [&](const SlotRun& x) { return x.slot == timed; });
        const LaunchPlan& plan = plan_for(run, entry);
        const auto time_start = std::chrono::steady_clock::now();
        const TimingResult t = runner().time(*loaded.kernel, plan, r.timing, timed);
        phases["time_ms"] = ms_since(time_start);
        reply["timed_slot"] = timed;
        reply["median_ms"] = t.median_ms;
        reply["relative_spread"] = finite_or_null(t.relative_spread);
        reply["min_ms"] = t.min_ms;
        reply["max_ms"] = t.max_ms;
        reply["converged"] = t.converged;
        reply["samples"] = t.samples_ms;
        if (r.timing.clock_ticks && !r.clock_cubin_file.empty()) {
          const auto clock_start = std::chrono::steady_clock::now();
          reply["clock_ticks"] = clock_ticks(r.clock_cubin_file.string(), plan, r.timing, timed);
          phases["clock_ms"] = ms_since(clock_start);
        }
      }
    } catch (const RunFailure& f) {
      status = f.status();
      reply["message"] = f.what();
      if (!current_slot.empty()) reply["failed_slot"] = current_slot;
    } catch (const std::exception& e) {
      if (runner().usable()) return error_reply(e.what());
      status = RunStatus::Trap;
      reply["message"] = e.what();
      if (!current_slot.empty()) reply["failed_slot"] = current_slot;
    }
    reply["phases"] = phases;
    reply["status"] = to_string(status);
    const bool fatal = is_fatal(status) || !runner().usable();
    reply["fatal"] = fatal;
    if (fatal) {
      // Unloading the module in a lost context (or behind a kernel that still
      // spins) could block; the process ends right after the reply anyway.
      (void)new LoadedKernel(std::move(*loaded.kernel));
    }
    return reply;
  }

  // The second measure, from the instrumented build of the same variant. A
  // build that does not load is reported, not held against the variant.
  json clock_ticks(const std::string& cubin_file, const LaunchPlan& plan, const TimingConfig& config,
                   const std::string& slot) {
    std::vector<char> image = read_file(cubin_file);
    image.push_back('\0');
    LoadResult loaded = runner().load(image, plan.entry);
    if (!loaded.ok()) return {{"error", loaded.message}};
    const ClockTicks c = runner().clock_ticks(*loaded.kernel, plan, config, slot);
    return {{"median_ticks", c.median_ticks}, {"median_span_ms", c.median_span_ms}, {"sm_mhz", c.sm_mhz},
            {"samples", c.samples}};
  }

  int device_;
  std::unique_ptr<GpuRunner> runner_;
  std::map<std::string, std::unique_ptr<Slot>> slots_;
};


}  // namespace

int run_worker_loop(std::istream& in, std::ostream& out, int device) {
  WorkerState state(device);
  return serve_json_lines(in, out, [&state](const json& request) { return state.handle(request); });
}

int run_worker_stdio(int device) {
  return serve_on_stdio([device](std::istream& in, std::ostream& out) { return run_worker_loop(in, out, device); },
                        "gi worker");
}

}  // namespace gi::fitness

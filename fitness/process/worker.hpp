#pragma once
// Process isolation of variant evaluation. A worker process owns one GPU and
// answers one JSON line per request line; the parent (WorkerProcess) sends
// requests with a wall-clock time-out and replaces the worker when a variant
// kills its CUDA context (illegal address, trap, time-out) or the process.
//
// The worker holds several plans at once, each in a named slot with its own
// device memory (GpuRunner slots): a variant is checked on a whole training
// set - the timed workload and small ones that drive borders, padding and
// masks - without uploading anything between evaluations.
//
// Requests (one JSON object per line) and replies:
//   {"cmd":"ping"}                       -> {"status":"ok","pid":N}
//   {"cmd":"load_plan","plan_file":P,"slot":S}
//        -> {"status":"ok","slot":S,"buffers":N,"references":M,"device":"..."}
//        Loads the plan into slot S (default "default"), replacing what S
//        held; other slots stay. A failed load leaves S empty.
//   {"cmd":"unload","slot":S}            -> {"status":"ok","slots":[names still loaded]}
//   {"cmd":"eval","cubin_file":F,"entry":E,
//    "slots":[{"slot":S,"block":[x,y,z],"grid":[x,y,z],"shared_bytes":N}, ...],
//    "time_slot":S,"check":true,"time":true,"timing":{TimingConfig fields},"timeout_ms":T}
//        Checks the variant on every slot listed, in order, and stops at the
//        first that fails (its status is the reply's); then times it on
//        time_slot (default: the first listed), which must be one of them.
//        Each slot runs with its own geometry; block, grid and shared_bytes
//        are optional (the slot's plan's). Without "slots": the "default"
//        slot, with optional "block", "grid", "shared_bytes" at the top level.
//        -> {"status":"ok"|"wrong_output"|... (to_string(RunStatus)),
//            "message" (of the first failure),
//            "failed_slot":S (when a check failed),
//            "checks":[{"slot","status","message","values_checked","max_abs","max_rel","rms",
//                       "output_digest"}, ...] (the slots checked, in order),
//            "max_abs","max_rel","rms","values_checked" (over every slot checked:
//              maxima, the RMS of all values, the sum),
//            "output_digest" (the slots' digests joined by ',': one slot, its digest),
//            "timed_slot":S,"median_ms","relative_spread","min_ms","max_ms","converged","samples":[...],
//            "clock_ticks":{"median_ticks","median_span_ms","sm_mhz","samples"} (with
//              "clock_cubin_file":F, the instrumented build, and timing.clock_ticks),
//            "phases":{"load_ms","check_ms","time_ms","clock_ms"},
//            "fatal":bool}
//   {"cmd":"quit"}                        -> {"status":"ok"}, then the loop returns 0
// A request that cannot be carried out (bad JSON, a malformed field, a slot
// that is not loaded, unreadable file, no GPU) is answered
// {"status":"error","message":...}; nothing was run. timeout_ms is the limit
// of one launch.
#include <sys/types.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fitness/process/json_line_server.hpp"
#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

// The GPU side that answers these requests is fitness/gpu/worker_loop.hpp
// (run_worker_loop, run_worker_stdio).

// Slots are named by non-empty strings of at most 64 printable ASCII
// characters ("train", "train:1", "validate:3"); a request that names no
// slot means this one.
inline const std::string kDefaultPlanSlot = "default";
// Empty when `name` is a valid slot name, else what is wrong with it.
std::string slot_name_problem(const std::string& name);

// One slot an eval checks, with the geometry of its launch.
struct SlotRun {
  std::string slot;
  std::optional<std::array<unsigned, 3>> block, grid;  // nullopt: the slot's plan's
  std::optional<std::size_t> shared_bytes;             // dynamic shared memory; nullopt: the plan's
  bool operator==(const SlotRun&) const = default;
};

struct EvalRequest {
  std::filesystem::path cubin_file;
  // The instrumented build (fitness/instrument/clock_instrument.hpp), timed for clock
  // ticks after the plain one when timing.clock_ticks is set; empty: none.
  std::filesystem::path clock_cubin_file;
  std::string entry;
  // The slots to check, in order; empty: the default slot with the geometry
  // below.
  std::vector<SlotRun> slots;
  // The slot to time; empty: the first of `slots`.
  std::string time_slot;
  std::optional<std::array<unsigned, 3>> block, grid;  // without slots; nullopt: the plan's
  std::optional<std::size_t> shared_bytes;             // without slots; nullopt: the plan's
  bool check = true;
  bool time = true;
  TimingConfig timing;
  std::chrono::milliseconds kernel_timeout{10000};
  // How long the parent waits for the reply; nullopt: derived from the
  // kernel time-out and the timing budget.
  std::optional<std::chrono::milliseconds> reply_timeout;
};

nlohmann::json to_json(const EvalRequest& request);
// Reads an eval request as the worker does; throws std::invalid_argument
// naming the field at fault. reply_timeout is the parent's and not sent.
EvalRequest eval_request_from_json(const nlohmann::json& j);
// The slots an eval request checks (its `slots`, or the default slot with
// the top-level geometry) and the one it times.
std::vector<SlotRun> slots_checked(const EvalRequest& request);
std::string timed_slot(const EvalRequest& request);

struct WorkerReply {
  nlohmann::json body;               // the reply as sent; null when none came
  RunStatus status = RunStatus::Ok;  // of the variant (eval); Ok for other commands that succeeded
  bool request_failed = false;       // the worker answered "error": nothing was evaluated
  bool worker_died = false;          // the worker was lost (fatal reply, crash, time-out) and killed
  std::string message;

  // The check part of an eval reply.
  CheckReport check_report() const;
  // The timing part of an eval reply, when it holds one.
  std::optional<TimingResult> timing() const;
  // The clock-tick part, when the worker measured it.
  std::optional<ClockTicks> clock_ticks() const;
  // The slot whose check (or timing) failed, when the reply names one.
  std::string failed_slot() const;
};

class WorkerProcess {
 public:
  // `executable` is run with `args` (not including argv[0]).
  WorkerProcess(std::string executable, std::vector<std::string> args);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the process. Throws std::runtime_error when it cannot be started
  // (fork fails, the executable cannot be run).
  void start();
  // Kills the process if it runs, starts a new one and re-sends the last
  // successful load_plan of every slot still loaded. Throws
  // std::runtime_error naming the slot when that fails.
  void restart();
  // Asks the worker to quit, then makes sure it is gone.
  void stop();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Replacements of a worker that had been started (the first start is not one).
  int restarts() const { return restarts_; }

  // Sends one request and waits at most `timeout` for its reply. Starts (or
  // restarts, replaying load_plan) the worker first when it is not running.
  // A time-out gives status Timeout; a worker that closes its end without a
  // reply (crash) gives Trap with "worker died: ..." in the message; both
  // kill the worker (SIGKILL) and reap it.
  WorkerReply call(const nlohmann::json& request, std::chrono::milliseconds timeout);

  WorkerReply ping(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Into the default slot. Remembered for restarts once the worker accepted it.
  WorkerReply load_plan(const std::filesystem::path& plan_file,
                        std::chrono::milliseconds timeout = std::chrono::seconds(300));
  // Into `slot`; remembered for restarts once the worker accepted it (a
  // refused load forgets the slot: the worker left it empty).
  WorkerReply load_slot(const std::string& slot, const std::filesystem::path& plan_file,
                        std::chrono::milliseconds timeout = std::chrono::seconds(300));
  // Frees a slot in the worker and forgets it for restarts.
  WorkerReply unload(const std::string& slot, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // The slots loaded (as replayed by a restart) and their plan files.
  const std::map<std::string, std::filesystem::path>& loaded_slots() const { return plan_files_; }
  WorkerReply eval(const EvalRequest& request);

 private:
  void kill_and_reap();
  // Reaps a child that is exiting; SIGKILL after `grace`. Says how it ended.
  std::string reap(std::chrono::milliseconds grace);
  WorkerReply lost(RunStatus status, std::string message);

  std::string executable_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string pending_;  // bytes read past the last reply line
  std::map<std::string, std::filesystem::path> plan_files_;  // slot -> plan file, replayed on restart
  int restarts_ = 0;
  bool started_ = false;
};

}  // namespace gi::fitness

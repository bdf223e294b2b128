#pragma once
// Process isolation of variant evaluation. A worker process owns one GPU and
// answers one JSON line per request line; the parent (WorkerProcess) sends
// requests with a wall-clock time-out and replaces the worker when a variant
// kills its CUDA context (illegal address, trap, time-out) or the process.
//
// Requests (one JSON object per line) and replies:
//   {"cmd":"ping"}                       -> {"status":"ok","pid":N}
//   {"cmd":"load_plan","plan_file":P}     -> {"status":"ok","buffers":N,"references":M,"device":"..."}
//   {"cmd":"eval","cubin_file":F,"entry":E,"block":[x,y,z],"grid":[x,y,z],
//    "check":true,"time":true,"timing":{TimingConfig fields},"timeout_ms":T}
//        -> {"status":"ok"|"wrong_output"|... (to_string(RunStatus)),
//            "message","max_abs","max_rel","rms","values_checked",
//            "median_ms","relative_spread","min_ms","max_ms","converged","samples":[...],
//            "clock_ticks":{"median_ticks","median_span_ms","sm_mhz","samples"} (with
//              "clock_cubin_file":F, the instrumented build, and timing.clock_ticks),
//            "fatal":bool}
//   {"cmd":"quit"}                        -> {"status":"ok"}, then the loop returns 0
// A request that cannot be carried out (bad JSON, no plan loaded, unreadable
// file, no GPU) is answered {"status":"error","message":...}. block and grid
// are optional (the plan's are used); timeout_ms is the limit of one launch.
#include <sys/types.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fitness/json_line_server.hpp"
#include "fitness/launch_plan.hpp"

namespace gi::fitness {


// Serves requests from `in` until EOF or "quit" (returns 0). After a reply
// with "fatal":true (Timeout, IllegalAddress, Trap) it ends the process at
// once with _Exit(kWorkerContextLostExit): the lost context cannot be torn
// down cleanly, and a kernel may still be spinning.
int run_worker_loop(std::istream& in, std::ostream& out, int device);

// run_worker_loop on stdin, with replies on the original stdout, while fd 1
// itself is pointed at stderr: device printf or a library writing to stdout
// cannot corrupt the protocol. For `gi worker` and test helpers.
int run_worker_stdio(int device);

struct EvalRequest {
  std::filesystem::path cubin_file;
  // The instrumented build (fitness/clock_instrument.hpp), timed for clock
  // ticks after the plain one when timing.clock_ticks is set; empty: none.
  std::filesystem::path clock_cubin_file;
  std::string entry;
  std::optional<std::array<unsigned, 3>> block, grid;  // nullopt: the plan's
  bool check = true;
  bool time = true;
  TimingConfig timing;
  std::chrono::milliseconds kernel_timeout{10000};
  // How long the parent waits for the reply; nullopt: derived from the
  // kernel time-out and the timing budget.
  std::optional<std::chrono::milliseconds> reply_timeout;
};

nlohmann::json to_json(const EvalRequest& request);

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
  // successful load_plan. Throws std::runtime_error when that fails.
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
  // Remembered for restarts once the worker accepted it.
  WorkerReply load_plan(const std::filesystem::path& plan_file,
                        std::chrono::milliseconds timeout = std::chrono::seconds(300));
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
  std::optional<std::filesystem::path> plan_file_;
  int restarts_ = 0;
  bool started_ = false;
};

}  // namespace gi::fitness

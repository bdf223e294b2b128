#include "fitness/worker.hpp"

#include <chrono>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <streambuf>
#include <thread>

#include "fitness/gpu_runner.hpp"
#include "fitness/json_line_server.hpp"
#include "fitness/plan_io.hpp"

namespace gi::fitness {

using json = nlohmann::json;

namespace {

// ---- worker side ------------------------------------------------------------

std::optional<RunStatus> parse_status(const std::string& text) {
  for (RunStatus s : {RunStatus::Ok, RunStatus::WrongOutput, RunStatus::LaunchError,
                      RunStatus::Timeout, RunStatus::IllegalAddress, RunStatus::Trap,
                      RunStatus::GuardViolation, RunStatus::InputModified, RunStatus::LoadError}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

bool is_fatal(RunStatus s) {
  return s == RunStatus::Timeout || s == RunStatus::IllegalAddress || s == RunStatus::Trap;
}

// A JSON number, or null for infinity/NaN (which JSON cannot hold).
json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::array<unsigned, 3> dims(const json& value, const char* what) {
  if (!value.is_array() || value.size() != 3)
    throw std::invalid_argument(std::string(what) + " must be an array of 3 positive integers");
  std::array<unsigned, 3> d{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!value[i].is_number_unsigned() || value[i].get<unsigned long>() == 0)
      throw std::invalid_argument(std::string(what) + " must be an array of 3 positive integers");
    d[i] = value[i].get<unsigned>();
  }
  return d;
}

TimingConfig timing_config(const json& j) {
  TimingConfig c;
  if (!j.is_object()) return c;
  c.warmup = j.value("warmup", c.warmup);
  c.min_samples = j.value("min_samples", c.min_samples);
  c.max_samples = j.value("max_samples", c.max_samples);
  c.target_relative_spread = j.value("target_relative_spread", c.target_relative_spread);
  c.budget_seconds = j.value("budget_seconds", c.budget_seconds);
  c.flush_l2 = j.value("flush_l2", c.flush_l2);
  c.spin_below_ms = j.value("spin_below_ms", c.spin_below_ms);
  c.clock_ticks = j.value("clock_ticks", c.clock_ticks);
  return c;
}

json timing_json(const TimingConfig& c) {
  return {{"warmup", c.warmup},
          {"min_samples", c.min_samples},
          {"max_samples", c.max_samples},
          {"target_relative_spread", c.target_relative_spread},
          {"budget_seconds", c.budget_seconds},
          {"flush_l2", c.flush_l2},
          {"spin_below_ms", c.spin_below_ms},
          {"clock_ticks", c.clock_ticks}};
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open module file " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes;
}

class WorkerState {
 public:
  explicit WorkerState(int device) : device_(device) {}

  json handle(const json& request) {
    const std::string cmd = request.value("cmd", "");
    if (cmd == "ping") return {{"status", "ok"}, {"pid", static_cast<long>(::getpid())}};
    if (cmd == "load_plan") return load_plan(request);
    if (cmd == "eval") return eval(request);
    return error_reply("unknown cmd '" + cmd + "' (ping, load_plan, eval, quit)");
  }

 private:
  GpuRunner& runner() {
    if (!runner_) runner_ = std::make_unique<GpuRunner>(device_);
    return *runner_;
  }

  json load_plan(const json& request) {
    if (!request.contains("plan_file") || !request["plan_file"].is_string())
      return error_reply("load_plan needs \"plan_file\": a path");
    try {
      runner();  // no GPU: say so before reading a large file
      bundle_ = std::make_unique<PlanBundle>(gi::fitness::load_plan(request["plan_file"].get<std::string>()));
      original_entry_ = bundle_->plan.entry;
      original_grid_ = bundle_->plan.grid;
      original_block_ = bundle_->plan.block;
      runner().prepare(bundle_->plan);
    } catch (const std::exception& e) {
      bundle_.reset();
      return error_reply(e.what());
    }
    return {{"status", "ok"},
            {"buffers", bundle_->plan.buffers.size()},
            {"references", bundle_->expected.size()},
            {"device", runner().device_name()}};
  }

  json eval(const json& request) {
    if (!bundle_) return error_reply("eval before load_plan");
    LaunchPlan& plan = bundle_->plan;
    std::vector<char> image;
    TimingConfig config;
    try {
      if (!request.contains("cubin_file") || !request["cubin_file"].is_string())
        return error_reply("eval needs \"cubin_file\": a path");
      plan.entry = request.value("entry", original_entry_);
      plan.grid = request.contains("grid") ? dims(request["grid"], "grid") : original_grid_;
      plan.block = request.contains("block") ? dims(request["block"], "block") : original_block_;
      config = timing_config(request.value("timing", json::object()));
      const long timeout_ms = request.value("timeout_ms", 10000L);
      if (timeout_ms <= 0) return error_reply("timeout_ms must be positive");
      runner().set_kernel_timeout(std::chrono::milliseconds(timeout_ms));
      image = read_file(request["cubin_file"].get<std::string>());
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
    LoadResult loaded = runner().load(image, plan.entry);
    phases["load_ms"] = ms_since(phase_start);
    if (!loaded.ok()) {
      reply["status"] = to_string(loaded.status);
      reply["message"] = loaded.message;
      return reply;
    }
    RunStatus status = RunStatus::Ok;
    try {
      if (request.value("check", true)) {
        const auto check_start = std::chrono::steady_clock::now();
        const CheckReport check =
            runner().run_checked(*loaded.kernel, plan, bundle_->expected, bundle_->tolerance);
        status = check.status;
        reply["message"] = check.message;
        reply["max_abs"] = finite_or_null(check.max_abs_error);
        reply["max_rel"] = finite_or_null(check.max_rel_error);
        reply["rms"] = finite_or_null(check.rms_error);
        reply["values_checked"] = check.values_checked;
        phases["check_ms"] = ms_since(check_start);
        reply["output_digest"] = check.output_digest;
      }
      // A wrong variant is not worth timing.
      if (status == RunStatus::Ok && request.value("time", true)) {
        const auto time_start = std::chrono::steady_clock::now();
        const TimingResult t = runner().time(*loaded.kernel, plan, config);
        phases["time_ms"] = ms_since(time_start);
        reply["median_ms"] = t.median_ms;
        reply["relative_spread"] = finite_or_null(t.relative_spread);
        reply["min_ms"] = t.min_ms;
        reply["max_ms"] = t.max_ms;
        reply["converged"] = t.converged;
        reply["samples"] = t.samples_ms;
        if (config.clock_ticks && request.contains("clock_cubin_file")) {
          const auto clock_start = std::chrono::steady_clock::now();
          reply["clock_ticks"] = clock_ticks(request["clock_cubin_file"].get<std::string>(), plan, config);
          phases["clock_ms"] = ms_since(clock_start);
        }
      }
    } catch (const RunFailure& f) {
      status = f.status();
      reply["message"] = f.what();
    } catch (const std::exception& e) {
      if (runner().usable()) return error_reply(e.what());
      status = RunStatus::Trap;
      reply["message"] = e.what();
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
  json clock_ticks(const std::string& cubin_file, const LaunchPlan& plan, const TimingConfig& config) {
    std::vector<char> image = read_file(cubin_file);
    image.push_back('\0');
    LoadResult loaded = runner().load(image, plan.entry);
    if (!loaded.ok()) return {{"error", loaded.message}};
    const ClockTicks c = runner().clock_ticks(*loaded.kernel, plan, config);
    return {{"median_ticks", c.median_ticks}, {"median_span_ms", c.median_span_ms}, {"sm_mhz", c.sm_mhz},
            {"samples", c.samples}};
  }

  int device_;
  std::unique_ptr<GpuRunner> runner_;
  std::unique_ptr<PlanBundle> bundle_;
  std::string original_entry_;
  std::array<unsigned, 3> original_grid_{}, original_block_{};
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

json to_json(const EvalRequest& r) {
  json j = {{"cmd", "eval"},
            {"cubin_file", r.cubin_file.string()},
            {"entry", r.entry},
            {"check", r.check},
            {"time", r.time},
            {"timing", timing_json(r.timing)},
            {"timeout_ms", static_cast<long>(r.kernel_timeout.count())}};
  if (r.block) j["block"] = *r.block;
  if (r.grid) j["grid"] = *r.grid;
  if (!r.clock_cubin_file.empty()) j["clock_cubin_file"] = r.clock_cubin_file.string();
  return j;
}

// ---- parent side ------------------------------------------------------------

namespace {

double number_or(const json& body, const char* key, double fallback) {
  const auto it = body.find(key);
  return it != body.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "status " + std::to_string(status);
}

}  // namespace

CheckReport WorkerReply::check_report() const {
  CheckReport r;
  r.status = status;
  r.message = message;
  if (body.is_object()) {
    r.max_abs_error = number_or(body, "max_abs", 0);
    r.max_rel_error = number_or(body, "max_rel", 0);
    r.rms_error = number_or(body, "rms", 0);
    r.values_checked = static_cast<std::size_t>(number_or(body, "values_checked", 0));
    const auto digest = body.find("output_digest");
    if (digest != body.end() && digest->is_string()) r.output_digest = digest->get<std::string>();
  }
  return r;
}

std::optional<ClockTicks> WorkerReply::clock_ticks() const {
  if (!body.is_object() || !body.contains("clock_ticks") || !body["clock_ticks"].contains("median_ticks"))
    return std::nullopt;
  const json& c = body["clock_ticks"];
  ClockTicks t;
  t.median_ticks = number_or(c, "median_ticks", 0);
  t.median_span_ms = number_or(c, "median_span_ms", 0);
  t.sm_mhz = number_or(c, "sm_mhz", 0);
  if (c.contains("samples") && c["samples"].is_array()) t.samples = c["samples"].get<std::vector<double>>();
  return t;
}

std::optional<TimingResult> WorkerReply::timing() const {
  if (!body.is_object() || !body.contains("median_ms")) return std::nullopt;
  TimingResult t;
  t.median_ms = number_or(body, "median_ms", 0);
  t.relative_spread = number_or(body, "relative_spread", std::numeric_limits<double>::infinity());
  t.min_ms = number_or(body, "min_ms", 0);
  t.max_ms = number_or(body, "max_ms", 0);
  t.converged = body.value("converged", false);
  if (body.contains("samples") && body["samples"].is_array())
    t.samples_ms = body["samples"].get<std::vector<double>>();
  return t;
}

WorkerProcess::WorkerProcess(std::string executable, std::vector<std::string> args)
    : executable_(std::move(executable)), args_(std::move(args)) {}

WorkerProcess::~WorkerProcess() { kill_and_reap(); }

void WorkerProcess::start() {
  if (running()) return;
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
    throw std::runtime_error(std::string("worker: socketpair failed: ") + std::strerror(errno));
  // Reports a failed exec: closed by a successful one (close-on-exec).
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    throw std::runtime_error(std::string("worker: pipe failed: ") + std::strerror(errno));
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> strings;
  strings.push_back(executable_);
  strings.insert(strings.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {sockets[0], sockets[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("worker: fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    // A worker must not outlive the run that started it (it holds a GPU).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(sockets[1], STDIN_FILENO);
    ::dup2(sockets[1], STDOUT_FILENO);
    ::execv(argv[0], argv.data());
    const int error = errno;
    ssize_t ignored = ::write(exec_pipe[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::close(sockets[1]);
  ::close(exec_pipe[1]);
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (n > 0) {
    ::close(sockets[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    throw std::runtime_error("worker: cannot run " + executable_ + ": " + std::strerror(exec_error));
  }
  pid_ = pid;
  fd_ = sockets[0];
  pending_.clear();
  started_ = true;
}

std::string WorkerProcess::reap(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "not running";
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + grace;
  pid_t r = 0;
  while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string how;
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    how = "killed";
  } else {
    how = r > 0 ? describe_wait_status(status) : "lost";
  }
  pid_ = -1;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
  return how;
}

void WorkerProcess::kill_and_reap() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  reap(std::chrono::milliseconds(0));
}

void WorkerProcess::stop() {
  if (!running()) return;
  const char quit[] = "{\"cmd\":\"quit\"}\n";
  ::send(fd_, quit, sizeof quit - 1, MSG_NOSIGNAL);
  reap(std::chrono::seconds(2));
}

void WorkerProcess::restart() {
  const bool again = started_;
  kill_and_reap();
  start();
  if (again) ++restarts_;
  if (plan_file_) {
    const WorkerReply r = call({{"cmd", "load_plan"}, {"plan_file", plan_file_->string()}},
                               std::chrono::seconds(300));
    if (r.request_failed || r.worker_died || r.status != RunStatus::Ok)
      throw std::runtime_error("worker restarted, but reloading plan " + plan_file_->string() +
                               " failed: " + r.message);
  }
}

WorkerReply WorkerProcess::lost(RunStatus status, std::string message) {
  WorkerReply reply;
  reply.status = status;
  reply.worker_died = true;
  reply.message = std::move(message);
  return reply;
}

WorkerReply WorkerProcess::call(const json& request, std::chrono::milliseconds timeout) {
  if (!running()) restart();
  const std::string line = json_line(request);
  for (std::size_t sent = 0; sent < line.size();) {
    const ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string how = reap(std::chrono::seconds(1));
      return lost(RunStatus::Trap, "worker died before taking the request (" + how + ")");
    }
    sent += static_cast<std::size_t>(n);
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t newline;
  while ((newline = pending_.find('\n')) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_and_reap();
      return lost(RunStatus::Timeout, "worker did not answer within " +
                                          std::to_string(timeout.count()) + " ms; killed");
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) {
      kill_and_reap();
      return lost(RunStatus::Trap, std::string("worker: poll failed: ") + std::strerror(errno));
    }
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string how = reap(std::chrono::seconds(2));
      return lost(RunStatus::Trap, "worker died without a reply (" + how + ")");
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  const std::string text = pending_.substr(0, newline);
  pending_.erase(0, newline + 1);

  WorkerReply reply;
  try {
    reply.body = json::parse(text);
  } catch (const json::exception& e) {
    kill_and_reap();
    WorkerReply bad = lost(RunStatus::Trap, std::string("worker sent a reply that is not JSON: ") + e.what());
    bad.request_failed = true;
    return bad;
  }
  const std::string status = reply.body.value("status", "");
  reply.message = reply.body.value("message", "");
  if (status == "error") {
    reply.request_failed = true;
  } else if (const auto s = parse_status(status)) {
    reply.status = *s;
  } else {
    reply.request_failed = true;
    reply.message = "worker sent an unknown status '" + status + "'";
  }
  if (reply.body.value("fatal", false)) {
    // It ends itself after this reply; make sure, and reap it.
    const std::string how = reap(std::chrono::seconds(2));
    reply.worker_died = true;
    reply.message += " (worker lost its CUDA context and was replaced: " + how + ")";
  }
  return reply;
}

WorkerReply WorkerProcess::ping(std::chrono::milliseconds timeout) {
  return call({{"cmd", "ping"}}, timeout);
}

WorkerReply WorkerProcess::load_plan(const std::filesystem::path& plan_file,
                                     std::chrono::milliseconds timeout) {
  WorkerReply reply = call({{"cmd", "load_plan"}, {"plan_file", plan_file.string()}}, timeout);
  if (!reply.request_failed && !reply.worker_died && reply.status == RunStatus::Ok)
    plan_file_ = plan_file;
  return reply;
}

WorkerReply WorkerProcess::eval(const EvalRequest& request) {
  const auto timeout =
      request.reply_timeout.value_or(std::chrono::milliseconds(30000) + 3 * request.kernel_timeout +
                                     std::chrono::milliseconds(static_cast<long long>(
                                         1000 * request.timing.budget_seconds)));
  return call(to_json(request), timeout);
}

}  // namespace gi::fitness

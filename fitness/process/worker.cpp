#include "fitness/process/worker.hpp"

#include <chrono>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

#include "fitness/process/json_line_server.hpp"

namespace gi::fitness {

using json = nlohmann::json;

namespace {

std::optional<RunStatus> parse_status(const std::string& text) {
  for (RunStatus s : {RunStatus::Ok, RunStatus::WrongOutput, RunStatus::LaunchError,
                      RunStatus::Timeout, RunStatus::IllegalAddress, RunStatus::Trap,
                      RunStatus::GuardViolation, RunStatus::InputModified, RunStatus::LoadError}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

std::array<unsigned, 3> dims(const json& value, const char* what) {
  if (!value.is_array() || value.size() != 3)
    throw std::invalid_argument(std::string(what) + " must be an array of 3 positive integers");
  std::array<unsigned, 3> d{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!value[i].is_number_integer() || value[i].get<long long>() <= 0 || value[i].get<long long>() > 0xFFFFFFFFll)
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

}  // namespace


namespace {

json dims_json(const std::array<unsigned, 3>& d) { return json::array({d[0], d[1], d[2]}); }

// A field of `j` read as a whole number >= 0; `path` names it in the error.
std::size_t count_field(const json& value, const std::string& path) {
  if (!value.is_number_integer() || value.get<long long>() < 0)
    throw std::invalid_argument(path + " must be a whole number >= 0");
  return value.get<std::size_t>();
}

bool bool_field(const json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_boolean()) throw std::invalid_argument(std::string(key) + " must be true or false");
  return it->get<bool>();
}

std::string string_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return {};
  if (!it->is_string()) throw std::invalid_argument(std::string(key) + " must be a string");
  return it->get<std::string>();
}

SlotRun slot_run_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) throw std::invalid_argument(path + " must be an object {\"slot\", \"block\", \"grid\", \"shared_bytes\"}");
  for (const auto& [key, value] : j.items())
    if (key != "slot" && key != "block" && key != "grid" && key != "shared_bytes")
      throw std::invalid_argument(path + "." + key + ": unknown field (slot, block, grid, shared_bytes)");
  SlotRun run;
  if (!j.contains("slot") || !j["slot"].is_string()) throw std::invalid_argument(path + ".slot: a slot name is needed");
  run.slot = j["slot"].get<std::string>();
  if (const std::string problem = slot_name_problem(run.slot); !problem.empty())
    throw std::invalid_argument(path + ".slot: " + problem);
  if (j.contains("block")) run.block = dims(j["block"], (path + ".block").c_str());
  if (j.contains("grid")) run.grid = dims(j["grid"], (path + ".grid").c_str());
  if (j.contains("shared_bytes")) run.shared_bytes = count_field(j["shared_bytes"], path + ".shared_bytes");
  return run;
}

json slot_run_json(const SlotRun& run) {
  json j = {{"slot", run.slot}};
  if (run.block) j["block"] = dims_json(*run.block);
  if (run.grid) j["grid"] = dims_json(*run.grid);
  if (run.shared_bytes) j["shared_bytes"] = *run.shared_bytes;
  return j;
}

}  // namespace

std::string slot_name_problem(const std::string& name) {
  if (name.empty()) return "a slot name must not be empty";
  if (name.size() > 64) return "slot name '" + name.substr(0, 64) + "...' is longer than 64 characters";
  for (const char c : name)
    if (c < 0x21 || c > 0x7E)
      return "slot name '" + name + "' holds a character that is not printable ASCII (space and control characters included)";
  return {};
}

std::vector<SlotRun> slots_checked(const EvalRequest& r) {
  if (!r.slots.empty()) return r.slots;
  return {SlotRun{kDefaultPlanSlot, r.block, r.grid, r.shared_bytes}};
}

std::string timed_slot(const EvalRequest& r) {
  if (!r.time_slot.empty()) return r.time_slot;
  return r.slots.empty() ? kDefaultPlanSlot : r.slots.front().slot;
}

json to_json(const EvalRequest& r) {
  json j = {{"cmd", "eval"},
            {"cubin_file", r.cubin_file.string()},
            {"entry", r.entry},
            {"check", r.check},
            {"time", r.time},
            {"timing", timing_json(r.timing)},
            {"timeout_ms", static_cast<long>(r.kernel_timeout.count())}};
  if (!r.slots.empty()) {
    j["slots"] = json::array();
    for (const SlotRun& run : r.slots) j["slots"].push_back(slot_run_json(run));
  }
  if (!r.time_slot.empty()) j["time_slot"] = r.time_slot;
  if (r.block) j["block"] = dims_json(*r.block);
  if (r.grid) j["grid"] = dims_json(*r.grid);
  if (r.shared_bytes) j["shared_bytes"] = *r.shared_bytes;
  if (!r.clock_cubin_file.empty()) j["clock_cubin_file"] = r.clock_cubin_file.string();
  return j;
}

EvalRequest eval_request_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("an eval request must be a JSON object");
  EvalRequest r;
  if (!j.contains("cubin_file") || !j["cubin_file"].is_string())
    throw std::invalid_argument("eval needs \"cubin_file\": a path");
  r.cubin_file = j["cubin_file"].get<std::string>();
  r.clock_cubin_file = string_field(j, "clock_cubin_file");
  r.entry = string_field(j, "entry");
  r.check = bool_field(j, "check", true);
  r.time = bool_field(j, "time", true);
  if (j.contains("timing")) {
    if (!j["timing"].is_object()) throw std::invalid_argument("timing must be an object of TimingConfig fields");
    try {
      r.timing = timing_config(j["timing"]);
    } catch (const json::exception& e) {
      throw std::invalid_argument(std::string("timing: a field of the wrong type: ") + e.what());
    }
  }
  if (j.contains("timeout_ms")) {
    if (!j["timeout_ms"].is_number_integer() || j["timeout_ms"].get<long long>() <= 0)
      throw std::invalid_argument("timeout_ms must be positive");
    r.kernel_timeout = std::chrono::milliseconds(j["timeout_ms"].get<long long>());
  }
  if (j.contains("block")) r.block = dims(j["block"], "block");
  if (j.contains("grid")) r.grid = dims(j["grid"], "grid");
  if (j.contains("shared_bytes")) r.shared_bytes = count_field(j["shared_bytes"], "shared_bytes");
  if (j.contains("slots")) {
    const json& slots = j["slots"];
    if (!slots.is_array() || slots.empty())
      throw std::invalid_argument("slots must be a non-empty array of {\"slot\", \"block\", \"grid\", \"shared_bytes\"}");
    if (r.block || r.grid || r.shared_bytes)
      throw std::invalid_argument("block, grid and shared_bytes go into each entry of slots when slots is given");
    for (std::size_t i = 0; i < slots.size(); ++i) {
      SlotRun run = slot_run_from_json(slots[i], "slots[" + std::to_string(i) + "]");
      for (const SlotRun& earlier : r.slots)
        if (earlier.slot == run.slot)
          throw std::invalid_argument("slots[" + std::to_string(i) + "].slot: '" + run.slot + "' is listed twice");
      r.slots.push_back(std::move(run));
    }
  }
  r.time_slot = string_field(j, "time_slot");
  if (!r.time_slot.empty()) {
    const std::vector<SlotRun> runs = slots_checked(r);
    if (std::none_of(runs.begin(), runs.end(), [&](const SlotRun& run) { return run.slot == r.time_slot; }))
      throw std::invalid_argument("time_slot '" + r.time_slot + "' is not one of the slots checked");
  } else if (j.contains("time_slot")) {
    throw std::invalid_argument("time_slot must not be empty");
  }
  return r;
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

std::string WorkerReply::failed_slot() const {
  if (!body.is_object()) return {};
  const auto it = body.find("failed_slot");
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
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
  // The worker watches this process and exits when it dies (serve_on_stdio).
  std::vector<std::string> environment = {std::string(kParentPidVariable) + "=" + std::to_string(::getpid())};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, kParentPidVariable, std::strlen(kParentPidVariable)) != 0 ||
        (*e)[std::strlen(kParentPidVariable)] != '=')
      environment.push_back(*e);
  std::vector<char*> envp;
  for (std::string& s : environment) envp.push_back(s.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {sockets[0], sockets[1], exec_pipe[0], exec_pipe[1]}) ::close(fd);
    throw std::runtime_error(std::string("worker: fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Not PR_SET_PDEATHSIG: it fires when the forking *thread* ends, and a
    // worker is often restarted on a measuring thread of one batch (several
    // GPUs), which killed it with SIGKILL at the batch's end.
    ::dup2(sockets[1], STDIN_FILENO);
    ::dup2(sockets[1], STDOUT_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
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
  // Every slot the lost worker held: the caller's next eval may name any.
  for (const auto& [slot, plan_file] : plan_files_) {
    const WorkerReply r = call({{"cmd", "load_plan"}, {"plan_file", plan_file.string()}, {"slot", slot}},
                               std::chrono::seconds(300));
    if (r.request_failed || r.worker_died || r.status != RunStatus::Ok)
      throw std::runtime_error("worker restarted, but reloading plan " + plan_file.string() + " into slot '" +
                               slot + "' failed: " + r.message);
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
  return load_slot(kDefaultPlanSlot, plan_file, timeout);
}

WorkerReply WorkerProcess::load_slot(const std::string& slot, const std::filesystem::path& plan_file,
                                     std::chrono::milliseconds timeout) {
  // Not replayed by a restart that this very call may cause.
  plan_files_.erase(slot);
  WorkerReply reply = call({{"cmd", "load_plan"}, {"plan_file", plan_file.string()}, {"slot", slot}}, timeout);
  if (!reply.request_failed && !reply.worker_died && reply.status == RunStatus::Ok) plan_files_[slot] = plan_file;
  return reply;
}

WorkerReply WorkerProcess::unload(const std::string& slot, std::chrono::milliseconds timeout) {
  plan_files_.erase(slot);
  if (!running()) {
    // A worker started later never gets the slot: nothing to free.
    WorkerReply reply;
    reply.body = {{"status", "ok"}};
    return reply;
  }
  return call({{"cmd", "unload"}, {"slot", slot}}, timeout);
}

WorkerReply WorkerProcess::eval(const EvalRequest& request) {
  // One checked launch per slot, the timing budget, and room for the rest.
  const auto launches = static_cast<long>(slots_checked(request).size()) + 2;
  const auto timeout =
      request.reply_timeout.value_or(std::chrono::milliseconds(30000) + launches * request.kernel_timeout +
                                     std::chrono::milliseconds(static_cast<long long>(
                                         1000 * request.timing.budget_seconds)));
  return call(to_json(request), timeout);
}

}  // namespace gi::fitness

#include "fitness/emulation/emulated_launch.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

namespace gi::fitness::emulation {

namespace {

constexpr int kCrashExit = 86;  // the child's exit code after a caught signal

// Shared between the parent and the child that runs the launch.
struct Control {
  volatile int finished;
  volatile int rc;
  volatile int signal;
  volatile int code;
  volatile std::uintptr_t address;
  volatile unsigned where[6];  // block x,y,z and thread x,y,z running now
  void* volatile stacks_begin;
  void* volatile stacks_end;
  char message[16384];
  // counters follow
};

Control* g_control = nullptr;  // in the child, for the signal handler

extern "C" void gi_emulator_crash_handler(int sig, siginfo_t* info, void*) {
  g_control->signal = sig;
  g_control->code = info ? info->si_code : 0;
  g_control->address = info ? reinterpret_cast<std::uintptr_t>(info->si_addr) : 0;
  _exit(kCrashExit);
}

std::string dims(const volatile unsigned* v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
}

std::string hex(std::uintptr_t v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

LaunchOutcome failure(RunStatus status, std::string message) {
  LaunchOutcome o;
  o.status = status;
  o.message = std::move(message);
  return o;
}

// The checks cuLaunchKernel makes (and the emulator's own limits).
std::string configuration_problem(const EmulatedModule& module, const LaunchPlan& plan) {
  const auto& b = plan.block;
  const auto& g = plan.grid;
  const unsigned long long threads = 1ull * b[0] * b[1] * b[2];
  if (b[0] == 0 || b[1] == 0 || b[2] == 0 || g[0] == 0 || g[1] == 0 || g[2] == 0)
    return "invalid launch configuration: a grid or block dimension is 0";
  if (threads > 1024 || b[0] > 1024 || b[1] > 1024 || b[2] > 64)
    return "invalid launch configuration: block (" + std::to_string(b[0]) + "," + std::to_string(b[1]) + "," +
           std::to_string(b[2]) + ") exceeds 1024 threads or the per-axis limits";
  if (g[1] > 65535 || g[2] > 65535) return "invalid launch configuration: grid y or z above 65535";
  if (module.parameter_count() != plan.params.size())
    return "the kernel takes " + std::to_string(module.parameter_count()) + " parameters, the plan passes " +
           std::to_string(plan.params.size());
  for (std::size_t i = 0; i < plan.params.size(); ++i) {
    const auto [is_buffer, index] = plan.params[i];
    const std::size_t given = is_buffer ? sizeof(void*) : plan.scalars.at(index).bytes.size();
    const std::string name = is_buffer ? plan.buffers.at(index).name : plan.scalars.at(index).name;
    if (module.parameter_size(i) != given)
      return "parameter " + std::to_string(i) + " ('" + name + "') of the kernel is " +
             std::to_string(module.parameter_size(i)) + " bytes, the plan passes " + std::to_string(given);
  }
  return "";
}

// A plan constant and where the module keeps its __constant__ variable.
struct ConstantCopy {
  void* address;
  const ScalarArg* value;
};

[[noreturn]] void run_child(const EmulatedModule& module, const EmulatedModule::Launch& launch, Control* control,
                            std::uint64_t* counters_out, void* counters, std::size_t counter_bytes,
                            const std::vector<ConstantCopy>& constants) {
  g_control = control;
  static char alternate_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alternate_stack;
  ss.ss_size = sizeof alternate_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa{};
  sa.sa_sigaction = gi_emulator_crash_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT}) sigaction(sig, &sa, nullptr);
  if (counters) std::memset(counters, 0, counter_bytes);
  // The child's copy of the module: each launch sets its own values.
  for (const ConstantCopy& c : constants) std::memcpy(c.address, c.value->bytes.data(), c.value->bytes.size());
  const int rc = module.launch()(&launch, control->message, sizeof control->message);
  if (counters) std::memcpy(counters_out, counters, counter_bytes);
  control->rc = rc;
  control->finished = 1;
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);
}

}  // namespace

LaunchOutcome run_emulated_launch(const EmulatedModule& module, const LaunchPlan& plan, HostBuffers& buffers,
                                  const LaunchLimits& limits, const std::string& counter_symbol,
                                  std::size_t counters) {
  if (std::string problem = configuration_problem(module, plan); !problem.empty())
    return failure(RunStatus::LaunchError, problem);
  void* counter_address = nullptr;
  if (!counter_symbol.empty()) {
    counter_address = module.symbol(counter_symbol);
    if (!counter_address)
      return failure(RunStatus::LoadError, "'" + counter_symbol + "' is not a global of the emulated module");
  }
  std::vector<ConstantCopy> constants;
  for (const ScalarArg& c : plan.constants) {
    void* address = module.symbol(c.name);
    if (!address)
      return failure(RunStatus::LaunchError, "the plan sets the __constant__ variable '" + c.name +
                                                 "', which is no global of the emulated module");
    // As the GPU runner checks: an array's bytes must fill the variable exactly.
    if (const std::size_t size = module.symbol_size(c.name); size != 0 && size != c.bytes.size())
      return failure(RunStatus::LaunchError, "the __constant__ variable '" + c.name + "' is " + std::to_string(size) +
                                                 " bytes, the plan gives " + std::to_string(c.bytes.size()));
    constants.push_back({address, &c});
  }
  // Arguments as cuLaunchKernel takes them: a pointer to each one's bytes.
  std::vector<void*> pointers(plan.params.size(), nullptr);
  std::vector<void*> args(plan.params.size(), nullptr);
  for (std::size_t i = 0; i < plan.params.size(); ++i) {
    const auto [is_buffer, index] = plan.params[i];
    if (is_buffer) {
      pointers[i] = buffers.argument(index);
      args[i] = &pointers[i];
    } else {
      args[i] = const_cast<std::byte*>(plan.scalars.at(index).bytes.data());
    }
  }
  const std::size_t counter_bytes = counters * sizeof(std::uint64_t);
  const std::size_t control_bytes = sizeof(Control) + counter_bytes;
  void* mapped = mmap(nullptr, control_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return failure(RunStatus::LaunchError, "cannot map the emulator's control block");
  auto* control = new (mapped) Control{};
  auto* counters_out = reinterpret_cast<std::uint64_t*>(static_cast<char*>(mapped) + sizeof(Control));
  struct Unmap {
    void* p;
    std::size_t n;
    ~Unmap() { munmap(p, n); }
  } unmap{mapped, control_bytes};

  EmulatedModule::Launch launch{};
  for (int d = 0; d < 3; ++d) {
    launch.grid[d] = plan.grid[d];
    launch.block[d] = plan.block[d];
  }
  launch.args = args.data();
  launch.dynamic_shared_bytes = plan.dynamic_shared_bytes;
  launch.stack_bytes = limits.stack_bytes;
  launch.where = control->where;
  launch.stacks_begin = &control->stacks_begin;
  launch.stacks_end = &control->stacks_end;

  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) return failure(RunStatus::LaunchError, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) run_child(module, launch, control, counters_out, counter_address, counter_bytes, constants);

  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  auto pause = std::chrono::microseconds(50);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return failure(RunStatus::LaunchError, "waiting for the emulator's child failed");
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  const std::string where = "thread " + dims(control->where + 3) + " of block " + dims(control->where);
  if (timed_out)
    return failure(RunStatus::Timeout, "the emulated launch did not finish within " +
                                           std::to_string(limits.timeout.count()) + " ms (" + where +
                                           " was running): an endless loop?");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && control->finished) {
    if (control->rc != 0) {
      const std::string message(control->message);
      // A deadlock would hang the GPU until its watchdog: a time-out there.
      const bool deadlock = message.rfind("deadlock", 0) == 0;
      return failure(deadlock ? RunStatus::Timeout : RunStatus::LaunchError, message);
    }
    LaunchOutcome ok;
    if (counter_address) ok.counters.assign(counters_out, counters_out + counters);
    return ok;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kCrashExit) {
    const int sig = control->signal;
    const std::uintptr_t address = control->address;
    if (sig == SIGSEGV || sig == SIGBUS) {
      const auto begin = reinterpret_cast<std::uintptr_t>(control->stacks_begin);
      const auto end = reinterpret_cast<std::uintptr_t>(control->stacks_end);
      if (address >= begin && address < end)
        return failure(RunStatus::IllegalAddress, where + " overflowed its stack of " +
                                                      std::to_string(limits.stack_bytes / 1024) +
                                                      " KiB (deep recursion or a large local array?)");
      const std::optional<std::string> near = buffers.locate(address);
      return failure(RunStatus::IllegalAddress, "illegal memory access by " + where + " at address " + hex(address) +
                                                    (near ? ", " + *near : ", far from every buffer"));
    }
    if (sig == SIGFPE)
      return failure(RunStatus::Trap, "arithmetic exception (integer division by zero?) in " + where +
                                          " (the GPU would not trap there, but the result is undefined)");
    return failure(RunStatus::Trap, std::string(sig == SIGABRT ? "abort" : "trap (__trap or assert)") + " in " + where +
                                        " (signal " + std::to_string(sig) + ")");
  }
  if (WIFSIGNALED(status))
    return failure(RunStatus::LaunchError, "the emulator's child was killed by signal " +
                                               std::to_string(WTERMSIG(status)) + " (" + where + ")");
  return failure(RunStatus::LaunchError, "the emulator's child exited with code " +
                                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                             " before the launch finished (" + where + ")");
}

}  // namespace gi::fitness::emulation

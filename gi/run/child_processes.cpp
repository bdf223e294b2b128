#include "gi/run/child_processes.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace gi {

namespace {

// The children a signal is passed on to; read by the handler only.
constexpr int kMaxChildren = 64;
pid_t g_children[kMaxChildren];
std::atomic<int> g_child_count{0};

void pass_on(int sig) {
  const int n = g_child_count.load();
  for (int i = 0; i < n; ++i)
    if (g_children[i] > 0) ::kill(g_children[i], sig);
}

}  // namespace

std::vector<ChildResult> run_children(const std::vector<std::vector<std::string>>& argvs) {
  std::vector<ChildResult> results(argvs.size());
  if (argvs.size() > static_cast<std::size_t>(kMaxChildren)) {
    for (auto& r : results) r.problem = "more than " + std::to_string(kMaxChildren) + " children";
    return results;
  }
  struct sigaction pass {}, old_int {}, old_term {};
  pass.sa_handler = pass_on;
  sigemptyset(&pass.sa_mask);
  ::sigaction(SIGINT, &pass, &old_int);
  ::sigaction(SIGTERM, &pass, &old_term);
  std::vector<pid_t> pids(argvs.size(), -1);
  for (std::size_t i = 0; i < argvs.size(); ++i) {
    std::vector<char*> args;
    for (const auto& a : argvs[i]) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int e = ::posix_spawn(&pids[i], args[0], nullptr, nullptr, args.data(), environ);
    if (e != 0) {
      pids[i] = -1;
      results[i].problem = "cannot start " + argvs[i][0] + ": " + std::strerror(e);
      continue;
    }
    g_children[g_child_count.load()] = pids[i];
    g_child_count.fetch_add(1);
  }
  for (std::size_t i = 0; i < argvs.size(); ++i) {
    if (pids[i] < 0) continue;
    int status = 0;
    while (::waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
    }
    results[i].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  g_child_count.store(0);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  return results;
}

}  // namespace gi

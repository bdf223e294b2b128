#include "fitness/ptx_assembler.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fitness/nvrtc_compiler.hpp"

extern char** environ;

namespace gi::fitness {

namespace {

namespace fs = std::filesystem;

struct RunOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  std::string problem; // could not start or wait
};

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `argv` with stdout and stderr into `log_file`; posix_spawn, so safe
// from the compile threads of a multi-threaded process.
RunOutput run(const std::vector<std::string>& argv, const fs::path& log_file) {
  RunOutput out;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    out.problem = "cannot start " + argv[0] + ": " + std::strerror(spawned);
    return out;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      out.problem = "waiting for " + argv[0] + " failed";
      return out;
    }
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  out.output = read_text(log_file);
  return out;
}

fs::path scratch_dir() {
  static const fs::path dir = fs::temp_directory_path() / ("gi-ptxas-" + std::to_string(::getpid()));
  return dir;
}

struct Found {
  std::string path;
  std::string problem;
};

// "release 13.0," in `ptxas --version`.
std::string release_of(const std::string& version_text) {
  const auto at = version_text.find("release ");
  if (at == std::string::npos) return {};
  const auto end = version_text.find_first_of(", \n", at + 8);
  return version_text.substr(at + 8, end - at - 8);
}

const Found& found() {
  static const Found result = [] {
    Found f;
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("GI_PTXAS"); p && *p) candidates.emplace_back(p);
    if (const char* h = std::getenv("CUDA_HOME"); h && *h) candidates.push_back(std::string(h) + "/bin/ptxas");
    candidates.emplace_back("/usr/local/cuda/bin/ptxas");
    if (const char* path = std::getenv("PATH")) {
      std::stringstream dirs(path);
      for (std::string d; std::getline(dirs, d, ':');)
        if (!d.empty()) candidates.push_back(d + "/ptxas");
    }
    const std::string want = nvrtc_version();
    std::error_code ec;
    fs::create_directories(scratch_dir(), ec);
    for (const auto& c : candidates) {
      if (::access(c.c_str(), X_OK) != 0) continue;
      const RunOutput v = run({c, "--version"}, scratch_dir() / "version.log");
      const std::string release = release_of(v.output);
      if (v.exit_code == 0 && release == want) {
        f.path = c;
        return f;
      }
      if (f.problem.empty())
        f.problem = c + " is release '" + release + "', NVRTC is " + want + " (a ptxas must match NVRTC)";
    }
    if (f.problem.empty()) f.problem = "no ptxas found ($GI_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH)";
    return f;
  }();
  return result;
}

}  // namespace

bool ptx_assembler_available() { return !found().path.empty(); }

std::string ptx_assembler_problem() { return found().problem; }

std::string ptx_assembler_path() { return found().path; }

Assembly assemble_ptx(const std::string& ptx, const std::string& arch, const std::vector<std::string>& options) {
  Assembly out;
  try {
    if (!ptx_assembler_available()) {
      out.error = ptx_assembler_problem();
      return out;
    }
    static std::atomic<long> counter{0};
    const fs::path base = scratch_dir() / ("v" + std::to_string(counter++));
    const fs::path in = base.string() + ".ptx", cubin = base.string() + ".cubin", log = base.string() + ".log";
    fs::create_directories(scratch_dir());
    {
      std::ofstream f(in, std::ios::binary);
      f << ptx;
      if (!f) {
        out.error = "cannot write " + in.string();
        return out;
      }
    }
    std::vector<std::string> argv = {found().path, "-arch=" + arch};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {in.string(), "-o", cubin.string()});
    const RunOutput r = run(argv, log);
    out.log = r.output;
    if (!r.problem.empty()) {
      out.error = r.problem;
    } else if (r.exit_code != 0) {
      out.error = "ptxas failed (exit " + std::to_string(r.exit_code) + "): " + r.output.substr(0, r.output.find('\n'));
    } else {
      const std::string bytes = read_text(cubin);
      if (bytes.empty()) {
        out.error = "ptxas wrote no cubin";
      } else {
        out.cubin.assign(bytes.begin(), bytes.end());
        out.ok = true;
      }
    }
    std::error_code ec;
    for (const auto& f : {in, cubin, log}) fs::remove(f, ec);
  } catch (const std::exception& e) {
    out.ok = false;
    out.error = std::string("assembling PTX failed: ") + e.what();
  }
  return out;
}

}  // namespace gi::fitness

// `gi report PATH [--out FILE]`: a self-contained HTML report of an evolution
// run (RUN_DIR) or of a library of evolved kernels (evolved/<gpu>/). The page
// is drawn by scripts/report/gi_report.py with matplotlib, so this runs that
// script with Debian's /usr/bin/python3 (where python3-matplotlib installs)
// and exits with its status.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/process/subprocess.hpp"
#include "gi/cli/cli.hpp"

namespace gi::cli {
namespace {
namespace fs = std::filesystem;

constexpr int kMatplotlibMissing = 3;  // gi_report.py's exit status when it cannot import matplotlib

// /usr/bin/python3 first: a python3 earlier on PATH (pyenv, a virtualenv) usually lacks the Debian
// package's matplotlib. posix_spawn does not search PATH, so the fallback is resolved here.
std::string find_python() {
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "python3";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace

void register_report(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Write a self-contained HTML report (plots, tables) of an evolution run "
                                           "directory or of a library of evolved kernels (evolved/<gpu>)");
  struct Args {
    std::string path, out;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("PATH", a->path, "a run directory (config.json, generations.jsonl) or evolved/<gpu>/")->required();
  cmd->add_option("--out", a->out, "the HTML file to write (default: PATH/report.html)");
  cmd->callback([a] {
    const fs::path script = fs::path(GI_SOURCE_DIR) / "scripts" / "report" / "gi_report.py";
    if (!fs::exists(script)) throw std::runtime_error("gi report: missing " + script.string());
    const std::string python = find_python();
    if (python.empty())
      throw std::runtime_error("gi report needs python3 with matplotlib: apt-get install python3-matplotlib");
    std::vector<std::string> argv = {python, script.string(), a->path};
    if (!a->out.empty()) argv.insert(argv.end(), {"--out", a->out});
    // Output goes through a file (run_subprocess's contract) and is printed when the script ends.
    const fs::path log = fs::temp_directory_path() / ("gi-report-" + std::to_string(::getpid()) + ".log");
    const fitness::SubprocessResult r = fitness::run_subprocess(argv, log);
    std::error_code ignored;
    fs::remove(log, ignored);
    if (!r.problem.empty()) throw std::runtime_error("gi report: " + r.problem);
    (r.exit_code == 0 ? std::cout : std::cerr) << r.output;
    if (r.exit_code == kMatplotlibMissing && r.output.find("needs matplotlib") == std::string::npos)
      std::cerr << "gi report needs matplotlib: apt-get install python3-matplotlib\n";
    if (r.exit_code != 0) throw CLI::RuntimeError(r.exit_code);
  });
}

}  // namespace gi::cli

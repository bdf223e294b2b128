// `gi report PATH [--out FILE]`: a self-contained HTML report of an evolution
// run (RUN_DIR) or of a library of evolved kernels (evolved/<gpu>/). The page
// is drawn by scripts/report/gi_report.py with matplotlib, so this runs that
// script with Debian's /usr/bin/python3 (where python3-matplotlib installs)
// and exits with its status.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fitness/process/atomic_file.hpp"
#include "fitness/process/subprocess.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/library/library_root.hpp"
#include "gi/publish/run_summary.hpp"

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

bool inside(const fs::path& path, const fs::path& folder) {
  const fs::path p = fs::weakly_canonical(path), f = fs::weakly_canonical(folder);
  const auto [end, at] = std::mismatch(f.begin(), f.end(), p.begin(), p.end());
  return end == f.end();
}

// PATH/report.html, or report-<name>.html in the working directory for a
// folder of gi's library (evolved/<gpu>): nothing is written into a library.
fs::path default_report_file(const fs::path& path) {
  try {
    if (inside(path, library().root))
      return fs::path("report-" + fs::weakly_canonical(path).filename().string() + ".html");
  } catch (const std::runtime_error&) {
    // No library: the folder is the user's own.
  }
  return path / "report.html";
}

bool is_run_dir(const fs::path& path) {
  return fs::is_regular_file(path / "config.json") || fs::is_regular_file(path / "generations.jsonl");
}

// RUN_DIR/run_summary.json from the run's records: what its page is drawn from.
fs::path write_run_summary(const fs::path& run_dir) {
  const fs::path file = run_dir / kRunSummaryFile;
  fitness::write_file_atomically(file, run_summary_text(run_summary(run_dir)));
  return file;
}

}  // namespace

void add_report(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Write a self-contained HTML report (plots, tables) of an evolution run "
                                           "directory or of a library of evolved kernels (evolved/<gpu>)");
  struct Args {
    std::string path, out;
    bool summary_only = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("PATH", a->path, "a run directory (config.json, generations.jsonl), evolved/<gpu>/ or a study folder (gi ablate)")->required();
  cmd->add_option("--out", a->out, "the HTML file to write (default: PATH/report.html; for a folder of gi's "
                                   "library, report-<folder>.html in the working directory)");
  cmd->add_flag("--summary-only", a->summary_only,
                "for a run directory: write its run_summary.json (what publication puts beside a kernel) and no page");
  cmd->callback([a] {
    if (a->summary_only) {
      if (!is_run_dir(a->path)) throw std::runtime_error(a->path + ": not a run directory (no config.json or generations.jsonl)");
      std::cout << "gi report: wrote " << write_run_summary(a->path).string() << "\n";
      return;
    }
    const fs::path script = library().report_script();
    if (!fs::exists(script)) throw std::runtime_error("gi report: missing " + script.string());
    const std::string python = find_python();
    if (python.empty())
      throw std::runtime_error("gi report needs python3 with matplotlib: apt-get install python3-matplotlib");
    // A run's page is drawn from its summary (gi/publish/run_summary.hpp), made here from its records.
    if (is_run_dir(a->path)) write_run_summary(a->path);
    const fs::path out = a->out.empty() ? default_report_file(a->path) : fs::path(a->out);
    std::vector<std::string> argv = {python, script.string(), a->path, "--out", out.string()};
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

GI_REGISTER_COMMAND("report", gi::cli::add_report)

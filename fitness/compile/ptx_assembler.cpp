#include "fitness/compile/ptx_assembler.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fitness/compile/cuda_toolkit.hpp"
#include "fitness/compile/nvrtc_compiler.hpp"
#include "fitness/process/subprocess.hpp"

namespace gi::fitness {

namespace {

namespace fs = std::filesystem;

// ptxas's input and output files live here; the folder goes when the
// process exits (each file is removed after its run).
struct ScratchDir {
  fs::path path;
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

const fs::path& scratch_dir() {
  static const ScratchDir dir{fs::temp_directory_path() / ("gi-ptxas-" + std::to_string(::getpid()))};
  return dir.path;
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
    for (const fs::path& root : cuda_toolkit_roots()) candidates.push_back((root / "bin" / "ptxas").string());
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
      const SubprocessResult v = run_subprocess({c, "--version"}, scratch_dir() / "version.log");
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
    const SubprocessResult r = run_subprocess(argv, log);
    out.log = r.output;
    if (!r.problem.empty()) {
      out.error = r.problem;
    } else if (r.exit_code != 0) {
      out.error = "ptxas failed (exit " + std::to_string(r.exit_code) + "): " + r.output.substr(0, r.output.find('\n'));
    } else {
      const std::string bytes = read_text_file(cubin);
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

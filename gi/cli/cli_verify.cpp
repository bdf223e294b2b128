// `gi verify [SEED_DIR...] [--out DIR] [--again]`: every seed on the GPU
// against its reference, training and held-out workloads, and the branch
// coverage of its training set; one JSON per kernel
// in DIR (kept across calls: done kernels are skipped unless --again) and a
// README.md table over all of them.
#include <fstream>
#include <iostream>

#include "fitness/process/atomic_file.hpp"
#include "gi/cli/command_registry.hpp"
#include "gi/cli/seed_argument.hpp"
#include "gi/library/seed_library.hpp"
#include "gi/library/seed_verification.hpp"
#include "gi/publish/versions.hpp"

namespace gi::cli {

namespace {

// "  coverage 14/16 (2 exempt)", and what failed it.
std::string coverage_summary(const nlohmann::json& r) {
  if (!r.contains("coverage")) return "";
  const nlohmann::json& c = r["coverage"];
  std::string s = "  coverage ";
  if (c.contains("taken") && c.contains("directions"))
    s += std::to_string(c["taken"].get<long long>()) + "/" + std::to_string(c["directions"].get<long long>()) + " (" +
         std::to_string(c.value("exempt", 0LL)) + " exempt)";
  else
    s += "not measured";
  if (r.contains("coverage_failure")) s += "  " + r["coverage_failure"].get<std::string>();
  return s;
}

}  // namespace

void add_verify(CLI::App& app) {
  auto* cmd = app.add_subcommand("verify", "Run every seed on the GPU against its reference on all its workloads and "
                                           "write one JSON per kernel plus a README table");
  struct Args {
    std::vector<std::string> seeds;
    std::string out, cache = ".gi-cache";
    int device = 0, runs = 5;
    bool again = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("SEED_DIR", a->seeds, "seed folders, or library seeds by name: family/kernel (default: every library seed)")
      ->transform(library_seed());
  cmd->add_option("--out", a->out, "output folder (default verification/<gpu-slug> in the working directory: nothing is written into the library)");
  cmd->add_option("--cache", a->cache, "cache folder (compiles, references)")->capture_default_str();
  cmd->add_option("--device", a->device, "CUDA device")->capture_default_str();
  cmd->add_option("--runs", a->runs, "repeated training runs for the run-to-run spread")->capture_default_str();
  cmd->add_flag("--again", a->again, "verify kernels that already have a result");
  cmd->callback([a] {
    namespace fs = std::filesystem;
    fitness::GpuRunner runner(a->device);
    const nlohmann::json versions = versions_json(a->device);
    const fs::path out = a->out.empty() ? fs::path("verification") / gpu_slug(runner.device_name()) : fs::path(a->out);
    fs::create_directories(out);
    std::vector<fs::path> dirs;
    for (const auto& s : a->seeds) dirs.emplace_back(s);
    if (dirs.empty()) dirs = find_seed_dirs(library().seeds());
    VerifyOptions options;
    options.runs = a->runs;
    if (!a->cache.empty()) options.cache = fs::absolute(a->cache);
    bool all_passed = true;
    for (const auto& dir : dirs) {
      const fs::path file = out / (dir.parent_path().filename().string() + "-" + dir.filename().string() + ".json");
      if (!a->again && fs::exists(file)) continue;
      nlohmann::json r;
      try {
        r = verify_seed(runner, dir, options);
      } catch (const std::exception& e) {
        r = {{"kernel", dir.parent_path().filename().string() + "/" + dir.filename().string()}, {"passed", false},
             {"error", e.what()}, {"tolerance", nlohmann::json::object()}};
      }
      r["versions"] = versions;
      fitness::write_file_atomically(file, r.dump(2) + "\n");
      std::cout << (r.value("passed", false) ? "ok    " : "FAIL  ") << r["kernel"].get<std::string>() << "  max abs "
                << r.value("max_abs_error", nlohmann::json()).dump() << "  max rel "
                << r.value("max_rel_error", nlohmann::json()).dump() << coverage_summary(r)
                << (r.contains("error") ? "  " + r["error"].get<std::string>() : std::string()) << std::endl;
      all_passed = all_passed && r.value("passed", false);
      if (!runner.usable()) throw std::runtime_error("the CUDA context was lost; run gi verify again to go on");
    }
    std::vector<nlohmann::json> results;
    for (const auto& entry : fs::directory_iterator(out))
      if (entry.path().extension() == ".json") {
        std::ifstream in(entry.path());
        results.push_back(nlohmann::json::parse(in));
      }
    std::sort(results.begin(), results.end(),
              [](const auto& x, const auto& y) { return x.at("kernel") < y.at("kernel"); });
    fitness::write_file_atomically(out / "README.md", verification_readme(versions, results));
    std::cout << "wrote " << (out / "README.md").string() << "\n";
    if (!all_passed) throw CLI::RuntimeError(1);
  });
}

}  // namespace gi::cli

GI_REGISTER_COMMAND("verify", gi::cli::add_verify)

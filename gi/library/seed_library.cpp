#include "gi/library/seed_library.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "fitness/process/atomic_file.hpp"
#include "fitness/workload/workload_plan.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

namespace fs = std::filesystem;

std::vector<std::string> kernel_globs(const std::string& patterns) {
  std::vector<std::string> out;
  std::stringstream in(patterns);
  for (std::string p; std::getline(in, p, ',');) {
    while (!p.empty() && p.front() == ' ') p.erase(p.begin());
    while (!p.empty() && p.back() == ' ') p.pop_back();
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

bool kernel_matches(const std::string& kernel, const std::string& glob) {
  return fnmatch(glob.c_str(), kernel.c_str(), 0) == 0;
}

std::vector<fs::path> find_seed_dirs(const fs::path& root) {
  std::vector<fs::path> dirs;
  if (!fs::is_directory(root)) throw std::runtime_error(root.string() + ": not a folder of seeds");
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_directory() && fs::exists(entry.path() / "spec.json") && fs::exists(entry.path() / "kernel.cu"))
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

namespace {

std::string hex(std::size_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016zx", v);
  return b;
}

// The sizes of the training workload: from the cache, or by generating it.
nlohmann::json training_sizes(const fitness::KernelSpec& spec, const std::optional<fs::path>& cache) {
  const nlohmann::json key = {{"generator", spec.train.generator}, {"variables", spec.train.variables},
                              {"seed", spec.train.seed}, {"launch", spec.grid[0].text() + spec.grid[1].text() + spec.grid[2].text()},
                              {"min_bytes", spec.min_bytes.text()}, {"entry", spec.entry}, {"format", 1}};
  const std::string dump = key.dump();
  std::optional<fs::path> file;
  if (cache) {
    file = *cache / "list" / (spec.entry + "-" + hex(std::hash<std::string>{}(dump)) + ".json");
    std::ifstream in(*file);
    if (in) {
      try {
        const nlohmann::json j = nlohmann::json::parse(in);
        if (j.at("key").dump() == dump) return j.at("sizes");
      } catch (const std::exception&) {
        // A damaged cache file is a miss.
      }
    }
  }
  fitness::Workload w = fitness::generate_workload(spec, spec.train, 0);
  const fitness::LaunchPlan plan = fitness::build_launch_plan(spec, std::move(w), spec.default_block_size);
  double threads = 1, outputs = 0;
  for (int d = 0; d < 3; ++d) threads *= static_cast<double>(plan.grid[d]) * plan.block[d];
  for (const auto& b : plan.buffers)
    if (b.role == fitness::ParamRole::Out || b.role == fitness::ParamRole::InOut)
      outputs += static_cast<double>(b.count * fitness::element_components(b.type));
  const nlohmann::json sizes = {{"threads", threads}, {"output_values", outputs}, {"min_bytes", plan.min_bytes_moved}};
  if (file) {
    fs::create_directories(file->parent_path());
    fitness::write_file_atomically(*file, nlohmann::json{{"key", key}, {"sizes", sizes}}.dump());
  }
  return sizes;
}

}  // namespace

LibraryEntry describe_seed(const fs::path& dir, const std::optional<fs::path>& cache) {
  LibraryEntry e;
  e.spec = fitness::load_kernel_spec(dir);
  e.name = dir.parent_path().filename().string() + "/" + dir.filename().string();
  const nlohmann::json sizes = training_sizes(e.spec, cache);
  e.threads = sizes.at("threads").get<double>();
  e.output_values = sizes.at("output_values").get<double>();
  e.min_bytes = sizes.at("min_bytes").get<double>();
  return e;
}

nlohmann::json LibraryEntry::to_json(double bandwidth_gbs) const {
  return {{"kernel", name},
          {"family", spec.family},
          {"entry", spec.entry},
          {"work_item", spec.work_item},
          {"training_threads", threads},
          {"training_output_values", output_values},
          {"min_bytes", min_bytes},
          {"memory_floor_us", min_bytes / (bandwidth_gbs * 1e9) * 1e6},
          {"bandwidth_gbs", bandwidth_gbs}};
}

std::string library_table(const std::vector<LibraryEntry>& entries, double bandwidth_gbs) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-13s %-32s %-22s %12s %12s %10s %10s\n", "family", "kernel", "work item",
                "threads", "outputs", "min MB", "floor us");
  out << line;
  for (const LibraryEntry& e : entries) {
    const std::string kernel = e.name.substr(e.name.find('/') + 1);
    std::snprintf(line, sizeof line, "%-13s %-32s %-22s %12.0f %12.0f %10.2f %10.2f\n", e.spec.family.c_str(),
                  kernel.c_str(), e.spec.work_item.c_str(), e.threads, e.output_values, e.min_bytes / 1e6,
                  e.min_bytes / (bandwidth_gbs * 1e9) * 1e6);
    out << line;
  }
  std::snprintf(line, sizeof line, "%zu kernels; memory floor = min bytes / %.0f GB/s\n", entries.size(), bandwidth_gbs);
  out << line;
  return out.str();
}

}  // namespace gi

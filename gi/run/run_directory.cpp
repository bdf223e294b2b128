#include "gi/run/run_directory.hpp"

#include <sstream>
#include <stdexcept>

#include "fitness/process/atomic_file.hpp"
#include "gi/seed/seed.hpp"

namespace gi {
namespace fs = std::filesystem;

RunDirectory RunDirectory::create(const fs::path& dir, const nlohmann::json& config, const nlohmann::json& versions) {
  if (fs::exists(dir / "checkpoint.json") || fs::exists(dir / "config.json"))
    throw std::runtime_error(dir.string() + ": already holds a run; resume it with --resume or choose another --run-dir");
  fs::create_directories(dir);
  RunDirectory run(dir);
  run.config_ = config;
  fitness::write_file_atomically(dir / "config.json", config.dump(2) + "\n");
  fitness::write_file_atomically(dir / "versions.json", versions.dump(2) + "\n");
  return run;
}

RunDirectory RunDirectory::open(const fs::path& dir) {
  RunDirectory run(dir);
  const fs::path config = dir / "config.json";
  if (!fs::is_regular_file(config)) throw std::runtime_error(config.string() + ": no such file: expected a run directory");
  try {
    run.config_ = nlohmann::json::parse(read_text_file(config));
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(config.string() + ": malformed JSON: " + e.what());
  }
  return run;
}

void RunDirectory::append(const std::string& name, const nlohmann::json& line) {
  std::ofstream out(dir_ / name, std::ios::app);
  out << line.dump() << "\n";
  out.flush();
  if (!out) throw std::runtime_error((dir_ / name).string() + ": cannot append");
}

void RunDirectory::append_evaluation(const nlohmann::json& line) { append("evaluations.jsonl", line); }
void RunDirectory::append_generation(const nlohmann::json& line) { append("generations.jsonl", line); }

void RunDirectory::write_checkpoint(const nlohmann::json& checkpoint) {
  fitness::write_file_atomically(dir_ / "checkpoint.json", checkpoint.dump() + "\n");
}

std::optional<nlohmann::json> RunDirectory::read_checkpoint() const { return read_json("checkpoint.json"); }

void RunDirectory::truncate_logs(int next_generation) {
  for (const char* name : {"evaluations.jsonl", "generations.jsonl"}) {
    const fs::path file = dir_ / name;
    if (!fs::exists(file)) continue;
    std::istringstream in(read_text_file(file));
    std::string kept, line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      try {
        if (nlohmann::json::parse(line).value("generation", 0) < next_generation) kept += line + "\n";
      } catch (const nlohmann::json::parse_error&) {
        // A line cut short by the kill: it belongs to the lost generation.
      }
    }
    fitness::write_file_atomically(file, kept);
  }
}

std::optional<nlohmann::json> RunDirectory::read_json(const std::string& name) const {
  const fs::path file = dir_ / name;
  if (!fs::exists(file)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_text_file(file));
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(file.string() + ": corrupt: " + e.what());
  }
}

void RunDirectory::write_text(const std::string& name, const std::string& text) {
  fitness::write_file_atomically(dir_ / name, text);
}

}  // namespace gi

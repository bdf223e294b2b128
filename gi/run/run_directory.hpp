#pragma once
// A run directory: config.json, versions.json, evaluations.jsonl (one line
// per evaluation), generations.jsonl (one per generation), checkpoint.json
// (after every generation, written atomically), and each later stage's
// record (tuning_*.json, best.gi, minimised.gi/.json, validation.json,
// comparison.json, stage_seconds.json, evaluator_stats.json, results.json).
// A killed run resumes from the checkpoint, losing at most the generation
// that was in flight. These raw records stay where the run was made (the
// ignored runs/); publication keeps their summary (gi/publish/run_summary.hpp).
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gi {

class RunDirectory {
 public:
  // Creates the folder (it must not hold a run already) and writes config and versions.
  static RunDirectory create(const std::filesystem::path& dir, const nlohmann::json& config,
                             const nlohmann::json& versions);
  // Opens an existing run for resuming; throws naming the missing or corrupt file.
  static RunDirectory open(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return dir_; }
  const nlohmann::json& config() const { return config_; }

  void append_evaluation(const nlohmann::json& line);
  void append_generation(const nlohmann::json& line);

  void write_checkpoint(const nlohmann::json& checkpoint);
  std::optional<nlohmann::json> read_checkpoint() const;

  // Drops log lines of generations >= next_generation: the lines of a
  // generation that was in flight when the run was killed.
  void truncate_logs(int next_generation);

  void write_text(const std::string& name, const std::string& text);
  // A stage's JSON result in the run directory; nullopt when the stage has not
  // written it yet; throws naming the file when it is corrupt.
  std::optional<nlohmann::json> read_json(const std::string& name) const;

 private:
  // "runs/x/" is kept as "runs/x": the run's id is the folder's name.
  explicit RunDirectory(std::filesystem::path dir)
      : dir_(dir.filename().empty() && dir.has_parent_path() ? dir.parent_path() : std::move(dir)) {}
  void append(const std::string& name, const nlohmann::json& line);

  std::filesystem::path dir_;
  nlohmann::json config_;
};

}  // namespace gi

#include "gi/publish/run_summary.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gi/seed/seed.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

// Six significant digits: enough to plot and compare, a third of the bytes.
// (NaN, for what was not measured, is written as null.)
nlohmann::json rounded(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == 0) return 0.0;
  const double scale = std::pow(10.0, 5 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();

double number(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return kUnmeasured;
  return j[key].get<double>();
}

double median(std::vector<double> v) {
  if (v.empty()) return kUnmeasured;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Calls `line` with each non-blank line's JSON object. gzread reads a plain
// file as it is, so one reader serves a live run's evaluations.jsonl and
// the gzipped copy an archived run keeps.
template <typename F>
void for_each_json_line(const fs::path& file, F&& line) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (!in) throw std::runtime_error(file.string() + ": cannot open");
  std::string text;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(in);
  if (failed) throw std::runtime_error(file.string() + ": cannot read (truncated or corrupt)");
  std::size_t number = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++number;
    const std::string row = text.substr(start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(row);
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(file.string() + ":" + std::to_string(number) + ": malformed JSON line: " + e.what());
    }
    if (!j.is_object()) throw std::runtime_error(file.string() + ":" + std::to_string(number) + ": expected a JSON object");
    line(j);
  }
}

std::optional<nlohmann::json> read_object(const fs::path& file) {
  if (!fs::is_regular_file(file)) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(read_text_file(file));
    if (!j.is_object()) throw std::runtime_error(file.string() + ": expected a JSON object");
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(file.string() + ": malformed JSON: " + e.what());
  }
}

// Which count an evaluation adds to: a repeat is counted as what it is, not
// under the status it copied.
std::string outcome(const nlohmann::json& e) {
  if (e.value("cached", false)) return "cached";
  if (e.value("same_binary", false)) return "same_binary";
  return e.contains("status") && e["status"].is_string() ? e["status"].get<std::string>() : "unknown";
}

struct Generation {
  std::vector<double> seed_times, times;
  std::map<std::string, int> outcomes;
  int total = 0;
};

}  // namespace

nlohmann::json run_summary(const fs::path& run_dir) {
  nlohmann::json s = {{"format", kRunSummaryFormat}, {"run_id", run_dir.filename().string()}};
  if (run_dir.filename().empty()) s["run_id"] = run_dir.parent_path().filename().string();
  for (const char* part : {"config", "versions", "stage_seconds", "evaluator_stats"})
    if (auto j = read_object(run_dir / (std::string(part) + ".json"))) s[part] = std::move(*j);

  std::map<int, nlohmann::json> logged;  // generations.jsonl, by generation
  if (fs::exists(run_dir / "generations.jsonl"))
    for_each_json_line(run_dir / "generations.jsonl", [&](const nlohmann::json& g) {
      if (g.contains("generation") && g["generation"].is_number_integer()) logged[g["generation"].get<int>()] = g;
    });

  std::map<int, Generation> gens;
  std::optional<fs::path> evaluations;
  for (const char* name : {"evaluations.jsonl", "evaluations.jsonl.gz"})
    if (!evaluations && fs::exists(run_dir / name)) evaluations = run_dir / name;
  long counted = 0;
  if (evaluations)
    for_each_json_line(*evaluations, [&](const nlohmann::json& e) {
      if (!e.contains("generation") || !e["generation"].is_number_integer()) return;
      Generation& g = gens[e["generation"].get<int>()];
      const double ms = number(e, "median_ms");
      const bool ok = e.value("status", std::string()) == "ok" && std::isfinite(ms);
      if (e.value("index", 0) == -1) {  // the seed, measured again each generation
        if (ok) g.seed_times.push_back(ms);
        return;
      }
      ++counted;
      ++g.total;
      ++g.outcomes[outcome(e)];
      if (ok) g.times.push_back(ms);
    });
  for (const auto& [n, line] : logged) gens.try_emplace(n);  // a generation logged without evaluations

  // One column per measure, one entry per generation (a row per generation
  // would repeat every key fifty times).
  nlohmann::json columns = nlohmann::json::object();
  for (const char* c : {"generation", "seed_ms", "best_ms", "median_ms", "search_best_ms", "total"})
    columns[c] = nlohmann::json::array();
  std::set<std::string> outcome_names;
  for (const auto& [n, g] : gens)
    for (const auto& [name, count] : g.outcomes) outcome_names.insert(name);
  nlohmann::json outcomes = nlohmann::json::object();
  for (const std::string& name : outcome_names) outcomes[name] = nlohmann::json::array();
  for (const auto& [n, g] : gens) {
    const nlohmann::json log = logged.count(n) ? logged[n] : nlohmann::json::object();
    double seed = median(g.seed_times);
    if (!std::isfinite(seed)) seed = number(log, "seed_ms");
    const double best = g.times.empty() ? kUnmeasured : *std::min_element(g.times.begin(), g.times.end());
    columns["generation"].push_back(n);
    columns["seed_ms"].push_back(rounded(seed));
    columns["best_ms"].push_back(rounded(best));
    columns["median_ms"].push_back(rounded(median(g.times)));
    columns["search_best_ms"].push_back(rounded(number(log, "best_ms")));
    columns["total"].push_back(g.total);
    for (const std::string& name : outcome_names) outcomes[name].push_back(g.outcomes.count(name) ? g.outcomes.at(name) : 0);
  }
  if (evaluations) columns["outcomes"] = std::move(outcomes);
  s["generations"] = std::move(columns);
  s["evaluations"] = evaluations ? nlohmann::json(counted) : nlohmann::json(nullptr);
  if (!logged.empty()) {
    const nlohmann::json& last = logged.rbegin()->second;
    s["search"] = {{"evaluations_per_second", rounded(number(last, "evaluations_per_second"))},
                   {"elapsed_seconds", rounded(number(last, "elapsed_seconds"))},
                   {"evaluations", last.value("evaluations", nlohmann::json(nullptr))}};
  }
  return s;
}

std::string run_summary_text(const nlohmann::json& summary) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : summary.items()) {
    out += std::string(first ? "" : ",") + "\n " + nlohmann::json(key).dump() + ": ";
    first = false;
    if (key == "generations" && value.is_object() && !value.empty()) {
      out += "{";
      bool first_column = true;
      for (const auto& [column, values] : value.items()) {
        out += std::string(first_column ? "" : ",") + "\n  " + nlohmann::json(column).dump() + ": " + values.dump();
        first_column = false;
      }
      out += "\n }";
    } else {
      out += value.dump();
    }
  }
  return out + "\n}\n";
}

}  // namespace gi

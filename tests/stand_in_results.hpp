#pragma once
// Comparing two evolve-all trees byte for byte (an uninterrupted run against
// a resumed or sharded one), leaving out what are wall times.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gi/seed/seed.hpp"

namespace gi::test {
namespace fs = std::filesystem;

// Every file of a folder tree, by relative path; the fields that are wall
// times (and the files that hold only times or the date) are left out, as
// they differ between any two runs.
inline std::map<std::string, std::string> results_of(const fs::path& root) {
  static const std::set<std::string> times_only = {"stage_seconds.json", "evaluator_stats.json", "versions.json",
                                                   "search_data.json"};
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (times_only.count(name)) continue;
    std::string text = read_text_file(e.path());
    auto drop = [](nlohmann::json j) {
      for (const char* k : {"elapsed_seconds", "eta_seconds", "evaluations_per_second", "search_seconds"}) j.erase(k);
      if (j.contains("state")) j["state"].erase("search_seconds");
      return j.dump();
    };
    if (name == "generations.jsonl") {
      std::istringstream in(text);
      text.clear();
      for (std::string line; std::getline(in, line);) text += drop(nlohmann::json::parse(line)) + "\n";
    } else if (name == "checkpoint.json") {
      text = drop(nlohmann::json::parse(text));
    } else if (name == "run_summary.json") {
      // The published run summary carries the run's wall times and versions.
      nlohmann::json j = nlohmann::json::parse(text);
      for (const char* k : {"stage_seconds", "evaluator_stats", "versions", "search"}) j.erase(k);
      text = j.dump();
    }
    // The two runs live in different folders, which the plan names.
    for (std::size_t at; (at = text.find(root.string())) != std::string::npos;) text.replace(at, root.string().size(), "<root>");
    out[e.path().lexically_relative(root).generic_string()] = text;
  }
  return out;
}

// Every file of two evolve-all trees is the same (results_of: wall times left
// out); `what` names the second tree in a failure.
inline void expect_same_results(const fs::path& a_root, const fs::path& b_root, const std::string& what) {
  const auto a = results_of(a_root);
  const auto b = results_of(b_root);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [file, text] : a) {
    ASSERT_TRUE(b.count(file)) << file;
    EXPECT_EQ(text, b.at(file)) << file << " differs in " << what;
  }
  EXPECT_TRUE(a.count("evolved/stand-in-gpu/tools-sum_reduction/result.json"));
  EXPECT_FALSE(a.count("evolved/stand-in-gpu/tools-intensity_minmax/result.json"));  // rejected
  EXPECT_TRUE(a.count("evolved/stand-in-gpu/failures.json"));
}

}  // namespace gi::test

#pragma once
// Where the wall time of one `gi register` or `gi transform` run goes, as a
// user waits for it: the split register.json and profile.md report.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi::reg {

// Seconds since this process started (from /proc/self/stat, 10 ms steps);
// -1 where that cannot be read.
double process_age_seconds();

// Named, consecutive phases of a run: each lap() closes the phase that
// started at the previous lap (or at construction).
class WallTimes {
 public:
  // `before`: seconds the process ran before this clock started (start-up
  // of the program itself: loading, static set-up, parsing the command).
  explicit WallTimes(double before);
  void lap(const std::string& phase);
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }
  double total() const;
  // {"phase": seconds, ..., "total": seconds}
  nlohmann::json json() const;
  // A markdown table of the phases and their shares of the total.
  std::string table() const;

 private:
  std::chrono::steady_clock::time_point last_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace gi::reg

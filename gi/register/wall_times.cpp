#include "gi/register/wall_times.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace gi::reg {

double process_age_seconds() {
  // Field 22 of /proc/self/stat is the start time in clock ticks after boot;
  // the command name (field 2) is in parentheses and may hold spaces.
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  std::ifstream uptime_file("/proc/uptime");
  double uptime = 0;
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (close == std::string::npos || !(uptime_file >> uptime) || ticks_per_second <= 0) return -1;
  std::istringstream rest(text.substr(close + 2));  // from field 3
  std::string field;
  for (int i = 3; i < 22; ++i) rest >> field;
  unsigned long long start_ticks = 0;
  if (!(rest >> start_ticks)) return -1;
  const double age = uptime - static_cast<double>(start_ticks) / ticks_per_second;
  return age >= 0 ? age : -1;
}

WallTimes::WallTimes(double before) : last_(std::chrono::steady_clock::now()) {
  if (before >= 0) phases_.emplace_back("before the command", before);
}

void WallTimes::lap(const std::string& phase) {
  const auto now = std::chrono::steady_clock::now();
  phases_.emplace_back(phase, std::chrono::duration<double>(now - last_).count());
  last_ = now;
}

double WallTimes::total() const {
  double t = 0;
  for (const auto& [name, seconds] : phases_) t += seconds;
  return t;
}

nlohmann::json WallTimes::json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, seconds] : phases_) j[name] = seconds;
  j["total"] = total();
  return j;
}

std::string WallTimes::table() const {
  const double t = total();
  std::string out = "| phase | seconds | share |\n|---|---:|---:|\n";
  char line[256];
  for (const auto& [name, seconds] : phases_) {
    std::snprintf(line, sizeof line, "| %s | %.3f | %.1f%% |\n", name.c_str(), seconds, t > 0 ? 100 * seconds / t : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "| total | %.3f | |\n", t);
  return out + line;
}

}  // namespace gi::reg

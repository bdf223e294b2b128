#include "seeds/common/generator_args.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gi::seeds {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

std::string range(double lo, double hi) {
  auto text = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  return text(lo) + ".." + text(hi);
}

}  // namespace

GeneratorArgs::GeneratorArgs(std::string generator, const nlohmann::json& variables, std::vector<std::string> allowed)
    : generator_(std::move(generator)), variables_(variables) {
  if (!variables_.is_object()) fail("", "expected an object of variables");
  for (const auto& [key, value] : variables_.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(key, "unknown variable (expected one of " + join(allowed) + ")");
}

void GeneratorArgs::fail(const std::string& key, const std::string& what) const {
  throw std::runtime_error("generator '" + generator_ + "': variables" + (key.empty() ? "" : "." + key) + ": " + what);
}

Dim3 GeneratorArgs::dims(const std::string& key, Dim3 fallback, int max_extent) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  const std::string expected = "expected [x, y, z] or one integer, each in 1.." + std::to_string(max_extent);
  auto extent = [&](const nlohmann::json& j) {
    if (!j.is_number_integer()) fail(key, expected + ", found " + j.dump());
    const long long v = j.get<long long>();
    if (v < 1 || v > max_extent) fail(key, expected + ", found " + j.dump());
    return static_cast<int>(v);
  };
  if (it->is_array()) {
    if (it->size() != 3) fail(key, expected + ", found " + it->dump());
    return Dim3{extent((*it)[0]), extent((*it)[1]), extent((*it)[2])};
  }
  const int n = extent(*it);
  return Dim3{n, n, n};
}

double GeneratorArgs::number(const std::string& key, double fallback, double lo, double hi) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo || it->get<double>() > hi)
    fail(key, "expected a number in " + range(lo, hi) + ", found " + it->dump());
  return it->get<double>();
}

int GeneratorArgs::integer(const std::string& key, int fallback, int lo, int hi) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  if (!it->is_number_integer() || it->get<long long>() < lo || it->get<long long>() > hi)
    fail(key, "expected an integer in " + range(lo, hi) + ", found " + it->dump());
  return static_cast<int>(it->get<long long>());
}

std::array<double, 3> GeneratorArgs::vec3(const std::string& key, std::array<double, 3> fallback, double lo,
                                          double hi) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  const std::string expected = "expected a number or [x, y, z], each in " + range(lo, hi);
  auto one = [&](const nlohmann::json& j) {
    if (!j.is_number() || j.get<double>() < lo || j.get<double>() > hi) fail(key, expected + ", found " + it->dump());
    return j.get<double>();
  };
  if (it->is_array()) {
    if (it->size() != 3) fail(key, expected + ", found " + it->dump());
    return {one((*it)[0]), one((*it)[1]), one((*it)[2])};
  }
  const double v = one(*it);
  return {v, v, v};
}

std::string GeneratorArgs::choice(const std::string& key, const std::string& fallback,
                                  const std::vector<std::string>& options) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  if (!it->is_string() || std::find(options.begin(), options.end(), it->get<std::string>()) == options.end())
    fail(key, "expected one of " + join(options) + ", found " + it->dump());
  return it->get<std::string>();
}

bool GeneratorArgs::flag(const std::string& key, bool fallback) const {
  const auto it = variables_.find(key);
  if (it == variables_.end()) return fallback;
  if (!it->is_boolean()) fail(key, "expected true or false, found " + it->dump());
  return it->get<bool>();
}

std::vector<double> GeneratorArgs::numbers(const std::string& key, double lo, double hi, std::size_t min_count,
                                           std::size_t max_count) const {
  const auto it = variables_.find(key);
  const std::string expected = "expected a list of " + std::to_string(min_count) + ".." + std::to_string(max_count) +
                               " numbers, each in " + range(lo, hi);
  if (it == variables_.end()) fail(key, "missing: " + expected);
  if (!it->is_array() || it->size() < min_count || it->size() > max_count)
    fail(key, expected + ", found " + it->dump());
  std::vector<double> out;
  for (const auto& j : *it) {
    if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < lo || j.get<double>() > hi)
      fail(key, expected + ", found " + it->dump());
    out.push_back(j.get<double>());
  }
  return out;
}

int workload_int(const fitness::Workload& w, const char* name, const char* who) {
  const auto it = w.variables.find(name);
  if (it == w.variables.end())
    throw std::runtime_error(std::string(who) + " reference: no variable '" + name + "'");
  return static_cast<int>(it->second);
}

}  // namespace gi::seeds

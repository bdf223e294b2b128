#include "gi/seed/input_distributions.hpp"

#include <cmath>

#include "gi/seed/init_sizes.hpp"

namespace gi {

using json = nlohmann::ordered_json;

const json& default_float_distribution() {
  static const json d = {{"uniform", json::array({-1, 1})}};
  return d;
}

json default_integer_distribution(const std::string& type) {
  if (type == "uint8" || type == "uchar4") return {{"uniform", json::array({0, 255})}};
  const bool is_unsigned = type == "unsigned" || type.rfind("uint", 0) == 0;
  return {{"uniform", json::array({is_unsigned ? 0 : -100, 100})}};
}

const json& varied_distribution(int workload) {
  static const json d[] = {{{"uniform", json::array({-1, 1})}}, {{"normal", json::array({0, 1})}},
                           {{"uniform", json::array({0, 1})}},  {{"uniform", json::array({-5, -1})}},
                           {{"normal", json::array({0, 100})}}, {{"uniform", json::array({-1, 1})}}};
  return d[workload < 0 ? 0 : workload % 6];
}

namespace {

// To three decimals, a whole number as an integer (256, not 256.0).
json number(double v) { return json_number(std::round(v * 1000) / 1000); }

json uniform(double a, double b) { return {{"uniform", json::array({number(a), number(b)})}}; }
json normal(double mean, double sd) { return {{"normal", json::array({number(mean), number(sd)})}}; }

}  // namespace

json tested_distribution(std::pair<double, double> tested, int workload) {
  const auto [lo, hi] = tested;
  const double width = hi - lo, middle = (lo + hi) / 2;
  switch (workload < 0 ? -1 : workload % 6) {
    case 1: return normal(middle, width / 6);               // most values near the middle
    case 2: return uniform(lo, lo + width / 4);             // the lowest quarter only
    case 3: return uniform(lo - width / 4, hi + width / 4); // a third outside, both sides
    case 4: return normal(middle, width / 64);              // a few values: many threads alike
    case 5: return uniform(lo - width / 8, hi + width / 8); // each test both ways
    default: return uniform(lo, hi);
  }
}

}  // namespace gi

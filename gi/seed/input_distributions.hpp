#pragma once
// The distributions gi init draws input buffers from where the user gives
// none (--like): floats in uniform(-1, 1), integers small and of both signs,
// and floats the kernel tests against two numbers (a histogram's grey values,
// `v >= 0.0f && v < 256.0f`) across those numbers. Held-out workloads vary
// them; the small check workload reaches past a tested range on both sides.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gi {

// uniform(-1, 1).
const nlohmann::ordered_json& default_float_distribution();

// An integer input's values: uniform(0, 255) for 8-bit unsigned (grey levels,
// masks), else uniform(-100, 100), or (0, 100) for an unsigned type.
nlohmann::ordered_json default_integer_distribution(const std::string& type);

// A float input's values on held-out workload `workload` (0-4) and the small
// check (5): the shapes change with the workload.
const nlohmann::ordered_json& varied_distribution(int workload);

// A float input whose values the kernel tests against lo and hi: inside them
// on the timed workload (workload -1), in other shapes around them on the
// held-out ones (0-4), and an eighth of the width past each end on the small
// check (5), so that each test goes both ways.
nlohmann::ordered_json tested_distribution(std::pair<double, double> tested, int workload);

}  // namespace gi

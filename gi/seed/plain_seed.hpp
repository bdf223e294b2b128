#pragma once
// A seed's plain form: kernel.cu resolved at its default switch setting (the
// hand-written paths and the switch lines removed, grammar/switches.hpp) and
// spec.json without switches, its launch expressions given the switches'
// default values. What gi searches when a study asks what the
// transformation families find on their own: no edit of a plain seed can
// choose or copy a line a person wrote for a faster path.
#include <filesystem>

#include "gi/seed/seed.hpp"

namespace gi {

// Writes OUT/<family>/<kernel folder name>/ (a seed folder: kernel.cu,
// spec.json and the seed's other files, headers included) and returns it.
// Throws std::runtime_error for a seed without a spec or an output folder
// that exists already.
std::filesystem::path write_plain_seed(const Seed& seed, const std::filesystem::path& out);

}  // namespace gi

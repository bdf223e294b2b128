#pragma once
// `gi init`: a seed folder's spec.json drafted from a kernel's signature,
// for a user's own kernel. Pointers to const, and pointers the kernel never
// writes through, become inputs, other pointers outputs; scalars take their value from the workload variable of
// the same name. Inputs are drawn by the "random" generator
// (fitness/workload/random_workload.hpp), and the seed is its own
// reference (gi/evaluate/seed_reference.hpp). Every field that only the user
// can decide (element counts, the grid, the sizes, the range of an integer
// input) holds a string starting with kFillMarker, and the spec does not
// load until none is left.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct SpecScaffold {
  std::string entry;
  nlohmann::ordered_json spec;  // in the order a reader wants it
  std::vector<std::string> notes;  // what the user should know (other kernels, types gi cannot generate)
};

// Throws std::runtime_error naming the file: no kernel, an unknown --entry,
// several kernels and no --entry (the message lists them).
SpecScaffold scaffold_spec(std::string_view source, const std::string& file_name,
                           const std::optional<std::string>& entry, const std::string& family);

}  // namespace gi

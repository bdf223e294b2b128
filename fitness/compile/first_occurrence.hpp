#pragma once
// "Do each distinct thing once": for a batch of keys, the index of the first
// item with the same key. Used wherever a batch holds repeats (identical
// compiles, identical variants, identical binaries).
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace gi::fitness {

// first[i] == i for the first item of each key (and for an empty key, which
// matches nothing); otherwise the index of that first item.
inline std::vector<std::size_t> first_occurrence(const std::vector<std::string>& keys) {
  std::vector<std::size_t> first(keys.size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto [it, inserted] = seen.emplace(keys[i], i);
    first[i] = keys[i].empty() || inserted ? i : it->second;
  }
  return first;
}

}  // namespace gi::fitness

#pragma once
// What the line families (delete, replace, insert) and the line-level CUDA
// families share: finding the rule an edit names.
#include <optional>
#include <string>

#include "grammar/grammar.hpp"

namespace gi::grammar::edits {

struct NamedRule {
  std::size_t index = 0;
  bool sub = false;  // the name was of its IF/type sub-rule
};

inline std::optional<NamedRule> named_rule(const Grammar& g, const std::string& name) {
  bool sub = false;
  const auto i = g.find(name, &sub);
  if (!i) return std::nullopt;
  return NamedRule{*i, sub};
}

}  // namespace gi::grammar::edits

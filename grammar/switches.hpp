#pragma once
// Switches: alternative code paths a seed holds behind `#define NAME VALUE`
// lines (BarraCUDA's method: GI chooses and mixes paths per GPU). The seed's
// value is the default and gives the plain algorithm; `define:NAME=VALUE`
// edits set another (grammar/edits/define.cpp). A published kernel has its
// switches resolved: every `#if` over switch names decided, the dead paths
// and directives removed, and a switch's `#define` dropped where nothing
// uses its name any more, so a developer adopts clean code.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"

namespace gi::grammar {

// The file-level `#define NAME VALUE` line of a switch, and where its value
// stands inside the rule's text.
struct SwitchLine {
  std::size_t rule = 0;
  std::size_t value_offset = 0, value_length = 0;
  std::string value;
};
std::optional<SwitchLine> find_switch_line(const Grammar& g, const std::string& name);

// The seed's value of every switch in `context` (its `#define`); a switch
// without one is missing from the map (and fails validation elsewhere).
std::map<std::string, std::string> switch_values(const Grammar& g, const EditContext& context);

// The source with every conditional whose condition reads only switch names
// (and integers) decided by `values`; conditionals over other macros, and
// those of integers alone (`#if 0`), are kept as they are. Throws SourceError for a malformed conditional (an #else
// without #if, an #if never closed, a condition that does not parse).
std::string resolve_switches(std::string_view source, const std::map<std::string, std::string>& values,
                             const std::string& file_name = "kernel.cu");

// Which lines of `source` (1-based; index 0 unused) the resolution keeps: a
// line in a dead path (or a decided directive) is not live under `values`.
// What a branch-coverage report needs to tell "never taken" from "not there".
std::vector<bool> live_lines(std::string_view source, const std::map<std::string, std::string>& values,
                             const std::string& file_name = "kernel.cu");

}  // namespace gi::grammar

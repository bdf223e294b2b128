#pragma once
// The switch settings of a seed that gi runs as a whole: every allowed
// combination of its switches' values (a seed's alternative code paths,
// grammar/switches.hpp), each as the patch of define edits that selects it.
// `gi verify` checks every one against the reference and measures the branch
// coverage of each path; evolution tries each without line edits, so a
// result can say what GI added beyond choosing a path.
#include <cstddef>
#include <string>
#include <vector>

#include "gi/seed/seed.hpp"
#include "grammar/patch.hpp"

namespace gi {

struct SwitchSetting {
  std::string name;      // "" for the seed's own setting, else "BSPLINE_PATH=1,ITEMS=2" (non-default values)
  grammar::Patch patch;  // the define edits that select it (empty for the default)
};

// The default first, then every other allowed setting in value order. A
// seed with more than `limit` allowed settings gets the default and each
// switch changed alone (allowed ones), so a switch with many values stays
// cheap to verify. Throws std::runtime_error for a switch with no #define.
std::vector<SwitchSetting> switch_settings(const Seed& seed, std::size_t limit = 64);
// The same from a grammar and its context; `display_path` names the seed in errors.
std::vector<SwitchSetting> switch_settings(const grammar::Grammar& g, const grammar::EditContext& context,
                                           const std::string& display_path, std::size_t limit = 64);

}  // namespace gi

#pragma once
// What edit families need to know beyond the kernel source: the seed's
// switches (declared in its spec.json) for define edits, the workload's
// constants for const edits, and the values random edits are drawn from.
// Plain values, filled by the caller (gi/ reads them from the seed's spec).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gi::grammar {

// A switch: a `#define NAME VALUE` line of the seed whose values pick an
// alternative code path (`#if NAME == 1`) or a parameter of one (items per
// thread). The seed's own value is the default and gives the plain algorithm.
struct SwitchDef {
  std::string name;
  std::vector<std::string> values;  // the default among them
};

// Switch settings a seed allows, as a list of allowed sub-products: a setting
// is allowed when some entry admits it, i.e. every switch the entry names has
// one of the entry's values there (switches it does not name are free). An
// empty list allows every setting.
using SwitchCombinations = std::vector<std::map<std::string, std::vector<std::string>>>;

struct EditContext {
  // The kernel the spec launches (its `entry`); "" when no spec names one
  // (a bare .cu file): families that must know it take a file's only kernel.
  std::string entry;
  std::vector<SwitchDef> switches;
  SwitchCombinations switch_combinations;
  // Constant specialisation: parameter -> literal (a parameter without a
  // value here is not specialised).
  std::map<std::string, std::string> constants;
  // Float buffers whose spec declares an `accumulation_bound` (the most one
  // work item adds to one element): privatise may count them in fixed point.
  std::map<std::string, double> accumulation_bounds;
  // What random edits draw from.
  std::vector<int> unroll_factors{-1, 0, 1, 2, 4, 8};
  std::vector<int> launch_bound_threads{64, 128, 256, 512, 1024};
  std::vector<int> launch_bound_blocks{0, 1, 2, 4, 8};
  // Up to 32: a reduction into one atomic wants many items per thread (the
  // library's hand-written min/max path takes 32; 8 left it at 40% of that).
  std::vector<int> coarsen_factors{2, 4, 8, 16, 32};
  // warp_per_item's group sizes, each a candidate at every site (a few, so
  // that GP's first generation can hold them all).
  std::vector<int> warp_group_sizes{8, 32};

  const SwitchDef* find_switch(std::string_view name) const {
    for (const SwitchDef& s : switches)
      if (s.name == name) return &s;
    return nullptr;
  }
};

// Whether `setting` (switch -> value) is allowed by `combinations`.
bool switch_setting_allowed(const SwitchCombinations& combinations, const std::map<std::string, std::string>& setting);

// The allowed setting closest to `setting` (fewest switches changed; ties go
// to the first in value order) that keeps switch `keep` at its value there:
// what a define edit must bring along so that the patch it joins still names
// an allowed setting (path 2 needs BSPLINE_PATH=2 before its items per thread
// mean anything). `setting` itself when it is allowed; nullopt when no allowed
// setting has that value of `keep`.
std::optional<std::map<std::string, std::string>> nearest_allowed_setting(
    const EditContext& context, const std::map<std::string, std::string>& setting, const std::string& keep);

}  // namespace gi::grammar

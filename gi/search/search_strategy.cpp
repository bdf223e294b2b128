// The registry of search strategies (gi/search/search_strategy.hpp).
#include "gi/search/search_strategy.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace gi {

namespace {

// A function-local static: strategies register from static initialisers of
// other files, in any order.
std::vector<SearchStrategy>& registry() {
  static std::vector<SearchStrategy> strategies;
  return strategies;
}

}  // namespace

bool register_search_strategy(SearchStrategy strategy) {
  if (find_search_strategy(strategy.name) != nullptr) {
    // A start-up error of the build, not of any input: say it and stop.
    std::fprintf(stderr, "gi: two search strategies are named '%s'\n", strategy.name.c_str());
    std::abort();
  }
  auto& r = registry();
  r.push_back(std::move(strategy));
  std::sort(r.begin(), r.end(), [](const SearchStrategy& a, const SearchStrategy& b) { return a.name < b.name; });
  return true;
}

const std::vector<SearchStrategy>& search_strategies() { return registry(); }

const SearchStrategy* find_search_strategy(const std::string& name) {
  for (const SearchStrategy& s : registry())
    if (s.name == name) return &s;
  return nullptr;
}

std::string search_strategy_names() {
  std::string out;
  for (const SearchStrategy& s : registry()) out += (out.empty() ? "" : ", ") + s.name;
  return out.empty() ? "(none registered: link the OBJECT library gi_strategies)" : out;
}

}  // namespace gi

#pragma once
// Search strategies by name ("gp", "random", "local", ...): each is one file
// in gi/search/strategies/ that registers itself with
// GI_REGISTER_SEARCH_STRATEGY, as edit families and seeds do, so adding a
// strategy is adding that file (and its test), never editing the engine. The
// files form the OBJECT library gi_strategies (gi_link_plugins links it).
#include <memory>
#include <string>
#include <vector>

#include "gi/search/search.hpp"

namespace gi {

// What every strategy here starts from: the run's search settings and the
// edit operators it draws edits from (the constructor the registration macro
// calls).
class ConfiguredSearch : public SearchAlgorithm {
 public:
  ConfiguredSearch(const SearchConfig& config, const EditOperators& ops) : config_(config), ops_(ops) {}

 protected:
  SearchConfig config_;
  const EditOperators& ops_;
};

struct SearchStrategy {
  std::string name;         // what --algorithm and a study's "algorithm" take
  std::string description;  // one line, for --help and gi families
  std::unique_ptr<SearchAlgorithm> (*make)(const SearchConfig& config, const EditOperators& ops);
};

// Registration (static objects in gi/search/strategies/*.cpp). Names must be
// unique; a second strategy of one name aborts at start-up with a message.
bool register_search_strategy(SearchStrategy strategy);

// Every registered strategy in name order.
const std::vector<SearchStrategy>& search_strategies();
// The strategy of that name, or nullptr.
const SearchStrategy* find_search_strategy(const std::string& name);
// "gp, local, random": the registered names, for messages and help.
std::string search_strategy_names();

}  // namespace gi

#define GI_SEARCH_STRATEGY_CONCAT2(a, b) a##b
#define GI_SEARCH_STRATEGY_CONCAT(a, b) GI_SEARCH_STRATEGY_CONCAT2(a, b)
// In one gi/search/strategies/<name>.cpp:
// GI_REGISTER_SEARCH_STRATEGY("random", RandomSearch, "1-5 random edits per patch, every generation afresh")
// where RandomSearch has a constructor (const SearchConfig&, const EditOperators&).
#define GI_REGISTER_SEARCH_STRATEGY(name, Class, description)                                              \
  namespace {                                                                                              \
  [[maybe_unused]] const bool GI_SEARCH_STRATEGY_CONCAT(gi_search_strategy_registered_, __LINE__) =        \
      ::gi::register_search_strategy(                                                                      \
          {name, description,                                                                              \
           [](const ::gi::SearchConfig& c, const ::gi::EditOperators& o) -> std::unique_ptr<::gi::SearchAlgorithm> { \
             return std::make_unique<Class>(c, o);                                                         \
           }});                                                                                            \
  }

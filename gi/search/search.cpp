#include "gi/search/search.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "gi/search/search_strategy.hpp"

namespace gi {
using grammar::Patch;

nlohmann::json to_json(const SearchConfig& c) {
  return {{"algorithm", c.algorithm}, {"population", c.population}, {"generations", c.generations},
          {"seed", c.seed}, {"noise_margin", c.noise_margin}, {"max_random_edits", c.max_random_edits},
          {"data_every", c.data_every}, {"budget_seconds", c.budget_seconds}};
}

SearchConfig search_config_from_json(const nlohmann::json& j) {
  SearchConfig c;
  try {
    c.algorithm = j.at("algorithm").get<std::string>();
    c.population = j.at("population").get<int>();
    c.generations = j.at("generations").get<int>();
    c.seed = j.at("seed").get<std::uint64_t>();
    c.noise_margin = j.at("noise_margin").get<double>();
    c.max_random_edits = j.value("max_random_edits", 5);
    c.data_every = j.value("data_every", 1);
    c.budget_seconds = j.value("budget_seconds", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("search config: ") + e.what());
  }
  if (!find_search_strategy(c.algorithm))
    throw std::runtime_error("search config: algorithm: expected " + search_strategy_names() + ", got '" + c.algorithm + "'");
  if (c.population < 2) throw std::runtime_error("search config: population: expected at least 2");
  if (c.generations < 1) throw std::runtime_error("search config: generations: expected at least 1");
  if (c.data_every < 0) throw std::runtime_error("search config: data_every: expected 0 (the run chooses) or more");
  if (!(c.budget_seconds >= 0)) throw std::runtime_error("search config: budget_seconds: expected 0 (none) or more");
  return c;
}

nlohmann::json to_json(const SearchState& s) {
  nlohmann::json pop = nlohmann::json::array();
  for (const auto& i : s.population) pop.push_back(to_json(i));
  return {{"next_generation", s.next_generation}, {"population", pop},
          {"best", s.best ? to_json(*s.best) : nlohmann::json(nullptr)}, {"seed_median_ms", s.seed_median_ms}, {"best_relative", s.best_relative},
          {"noise_margin", s.noise_margin}, {"evaluations", s.evaluations}, {"rng", s.rng},
          {"search_seconds", s.search_seconds}};
}

SearchState search_state_from_json(const nlohmann::json& j) {
  SearchState s;
  s.next_generation = j.at("next_generation").get<int>();
  for (const auto& i : j.at("population")) s.population.push_back(individual_from_json(i));
  if (!j.at("best").is_null()) s.best = individual_from_json(j.at("best"));
  s.seed_median_ms = j.at("seed_median_ms").get<double>();
  s.best_relative = j.value("best_relative", 1.0);
  s.noise_margin = j.at("noise_margin").get<double>();
  s.evaluations = j.at("evaluations").get<std::uint64_t>();
  s.rng = j.at("rng").get<std::string>();
  s.search_seconds = j.value("search_seconds", 0.0);
  return s;
}

bool search_finished(const SearchConfig& config, const SearchState& state) {
  if (state.next_generation >= config.generations) return true;
  return config.budget_seconds > 0 && state.search_seconds >= config.budget_seconds;
}

Patch crossover(const Patch& a, const Patch& b, std::mt19937_64& rng) {
  auto cut = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  std::size_t a1 = cut(a.edits.size()), a2 = cut(a.edits.size());
  std::size_t b1 = cut(b.edits.size()), b2 = cut(b.edits.size());
  if (a1 > a2) std::swap(a1, a2);
  if (b1 > b2) std::swap(b1, b2);
  Patch child;
  child.edits.insert(child.edits.end(), a.edits.begin(), a.edits.begin() + static_cast<long>(a1));
  child.edits.insert(child.edits.end(), b.edits.begin() + static_cast<long>(b1), b.edits.begin() + static_cast<long>(b2));
  child.edits.insert(child.edits.end(), a.edits.begin() + static_cast<long>(a2), a.edits.end());
  return child;
}

std::unique_ptr<SearchAlgorithm> make_search(const SearchConfig& config, const EditOperators& ops) {
  if (const SearchStrategy* s = find_search_strategy(config.algorithm)) return s->make(config, ops);
  throw std::runtime_error("unknown search algorithm '" + config.algorithm + "': expected " + search_strategy_names());
}

}  // namespace gi

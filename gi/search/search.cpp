#include "gi/search/search.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "gi/seed/switch_settings.hpp"

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
  if (c.algorithm != "gp" && c.algorithm != "random" && c.algorithm != "local")
    throw std::runtime_error("search config: algorithm: expected gp, random or local, got '" + c.algorithm + "'");
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

namespace {

std::vector<Individual> ranked(std::vector<Individual> pop) {
  std::stable_sort(pop.begin(), pop.end(), [](const Individual& x, const Individual& y) { return fitter(x.eval, y.eval); });
  return pop;
}

// GECCO 2014 GP: initial population of single random edits; truncation
// selection of the top half; each parent gets two children, one by two-point
// crossover with another parent, one by appending a random edit. A seed with
// switches (and the define family on) starts with each of its allowed switch
// settings in the population too (at most half of it), so the search builds
// on the hand-written paths from the first generation, as BarraCUDA's GI
// chose among and combined its alternative implementations.
class GeneticProgramming : public SearchAlgorithm {
 public:
  GeneticProgramming(const SearchConfig& c, const EditOperators& ops) : config_(c), ops_(ops) {}

  std::vector<Patch> propose(const SearchState& state, std::mt19937_64& rng) override {
    std::vector<Patch> out;
    if (state.population.empty()) {
      const auto& families = ops_.available();
      if (std::find(families.begin(), families.end(), "define") != families.end())
        for (const SwitchSetting& s : switch_settings(ops_.grammar(), ops_.context(), ops_.grammar().file_name()))
          if (!s.patch.edits.empty() && out.size() < static_cast<std::size_t>(config_.population / 2))
            out.push_back(s.patch);
      while (out.size() < static_cast<std::size_t>(config_.population)) {
        Patch p;
        ops_.append_random_edit(p, rng);
        out.push_back(std::move(p));
      }
      return out;
    }
    const auto pop = ranked(state.population);
    const std::size_t parents = std::max<std::size_t>(1, pop.size() / 2);
    std::uniform_int_distribution<std::size_t> any_parent(0, parents - 1);
    for (std::size_t i = 0; out.size() < static_cast<std::size_t>(config_.population); i = (i + 1) % parents) {
      const Patch& p = pop[i].patch;
      Patch child = crossover(p, pop[any_parent(rng)].patch, rng);
      if (child.edits.empty()) ops_.append_random_edit(child, rng);
      out.push_back(std::move(child));
      if (out.size() == static_cast<std::size_t>(config_.population)) break;
      Patch mutant = p;
      ops_.append_random_edit(mutant, rng);
      out.push_back(std::move(mutant));
    }
    return out;
  }


 private:
  SearchConfig config_;
  const EditOperators& ops_;
};

class RandomSearch : public SearchAlgorithm {
 public:
  RandomSearch(const SearchConfig& c, const EditOperators& ops) : config_(c), ops_(ops) {}

  std::vector<Patch> propose(const SearchState&, std::mt19937_64& rng) override {
    std::vector<Patch> out;
    std::uniform_int_distribution<int> length(1, std::max(1, config_.max_random_edits));
    for (int i = 0; i < config_.population; ++i) {
      Patch p;
      for (int k = length(rng); k > 0; --k) ops_.append_random_edit(p, rng);
      out.push_back(std::move(p));
    }
    return out;
  }


 private:
  SearchConfig config_;
  const EditOperators& ops_;
};

// First-improvement local search from the best variant: neighbours add one
// edit or drop one; the first (in proposal order) that beats the current
// variant beyond the noise margin becomes current (the driver moves `best`).
class LocalSearch : public SearchAlgorithm {
 public:
  LocalSearch(const SearchConfig& c, const EditOperators& ops) : config_(c), ops_(ops) {}

  std::vector<Patch> propose(const SearchState& state, std::mt19937_64& rng) override {
    const Patch current = state.best ? state.best->patch : Patch{};
    std::vector<Patch> out;
    std::bernoulli_distribution drop(0.2);
    for (int i = 0; i < config_.population; ++i) {
      Patch p = current;
      if (!p.edits.empty() && drop(rng)) {
        p.edits.erase(p.edits.begin() +
                      static_cast<long>(std::uniform_int_distribution<std::size_t>(0, p.edits.size() - 1)(rng)));
      } else {
        ops_.append_random_edit(p, rng);
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  bool first_improvement() const override { return true; }

 private:
  SearchConfig config_;
  const EditOperators& ops_;
};

}  // namespace

std::unique_ptr<SearchAlgorithm> make_search(const SearchConfig& config, const EditOperators& ops) {
  if (config.algorithm == "gp") return std::make_unique<GeneticProgramming>(config, ops);
  if (config.algorithm == "random") return std::make_unique<RandomSearch>(config, ops);
  if (config.algorithm == "local") return std::make_unique<LocalSearch>(config, ops);
  throw std::runtime_error("unknown search algorithm '" + config.algorithm + "': expected gp, random or local");
}

}  // namespace gi

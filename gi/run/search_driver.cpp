#include "gi/run/search_driver.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gi {

std::uint64_t generation_data_seed(std::uint64_t run_seed, int generation) {
  // splitmix64 of (seed, generation): well spread, stable across platforms.
  std::uint64_t z = run_seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(generation + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

namespace {

std::mt19937_64 restore_rng(const SearchState& state, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (!state.rng.empty()) {
    std::istringstream in(state.rng);
    in >> rng;
    if (!in) throw std::runtime_error("checkpoint: rng: corrupt generator state");
  }
  return rng;
}

std::string save_rng(const std::mt19937_64& rng) {
  std::ostringstream out;
  out << rng;
  return out.str();
}

// Index of the individual that should become the new best, if any: valid,
// and faster relative to this generation's seed than the best was relative
// to its own generation's seed, by more than the noise margin.
std::optional<std::size_t> improvement(const std::vector<Individual>& evaluated, double seed_ms, double best_relative,
                                       double margin, bool first) {
  std::optional<std::size_t> pick;
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    const Evaluation& e = evaluated[i].eval;
    if (!e.valid() || !(e.score() / seed_ms < best_relative * (1.0 - margin))) continue;
    if (first) return i;
    if (!pick || e.score() < evaluated[*pick].eval.score()) pick = i;
  }
  return pick;
}

// What is left of the search: the generations to go at this call's pace,
// or the rest of the time budget if that ends it first.
double eta_seconds(const SearchConfig& config, const SearchState& state, double per_generation) {
  if (search_finished(config, state)) return 0;
  double left = per_generation * (config.generations - state.next_generation);
  if (config.budget_seconds > 0) left = std::min(left, std::max(0.0, config.budget_seconds - state.search_seconds));
  return left;
}

}  // namespace

std::uint64_t training_data_seed(const SearchConfig& config, int generation) {
  return generation_data_seed(config.seed, generation / config.data_every);
}

SearchState run_search(const SearchConfig& config, const EditOperators& ops, Evaluator& evaluator, RunDirectory& run,
                       SearchState state, const DriverOptions& options) {
  if (config.data_every < 1) throw std::logic_error("run_search: data_every must be resolved (at least 1)");
  auto algorithm = make_search(config, ops);
  std::mt19937_64 rng = restore_rng(state, config.seed);
  const auto start = std::chrono::steady_clock::now();
  int run_this_call = 0;
  std::uint64_t evaluations_this_call = 0;
  while (!search_finished(config, state)) {
    if (options.max_generations_this_call >= 0 && run_this_call >= options.max_generations_this_call) break;
    const int gen = state.next_generation;
    const auto generation_start = std::chrono::steady_clock::now();
    evaluator.begin_generation(gen, training_data_seed(config, gen));
    // The next data set is made while this one's generations run: all of
    // them, not only the last, so slow data hides behind data_every generations.
    const int next_set = (gen / config.data_every + 1) * config.data_every;
    if (gen % config.data_every == 0 && next_set < config.generations)
      evaluator.prefetch_generation(next_set, training_data_seed(config, next_set));
    std::vector<grammar::Patch> batch{grammar::Patch{}};  // the seed, measured on this generation's data
    const auto proposals = algorithm->propose(state, rng);
    batch.insert(batch.end(), proposals.begin(), proposals.end());
    const auto evals = evaluator.evaluate(batch);
    if (evals.size() != batch.size()) throw std::logic_error("evaluator returned a wrong number of evaluations");
    const Evaluation& seed_eval = evals[0];
    if (!seed_eval.valid())
      throw std::runtime_error("generation " + std::to_string(gen) + ": the unmodified seed failed (" +
                               to_string(seed_eval.status) + ": " + seed_eval.message +
                               "); the run stops, its checkpoint is intact");
    if (gen == 0 && !state.best) {
      state.noise_margin = std::max(config.noise_margin, 2.0 * seed_eval.relative_spread);
      state.best = Individual{grammar::Patch{}, seed_eval};
    }
    state.seed_median_ms = seed_eval.median_ms;

    std::vector<Individual> evaluated;
    int valid = 0, compiled = 0, cached = 0, same_binary = 0;
    for (std::size_t i = 0; i < evals.size(); ++i) {
      nlohmann::json line = to_json(evals[i]);
      line["generation"] = gen;
      line["index"] = static_cast<int>(i) - 1;  // -1: the seed
      line["patch"] = grammar::to_string(batch[i]);
      run.append_evaluation(line);
      if (i == 0) continue;
      valid += evals[i].valid();
      compiled += evals[i].compiled;
      cached += evals[i].cached;
      same_binary += evals[i].same_binary;
      evaluated.push_back({batch[i], evals[i]});
    }
    if (auto pick = improvement(evaluated, seed_eval.score(), state.best_relative, state.noise_margin,
                                algorithm->first_improvement())) {
      state.best = evaluated[*pick];
      state.best_relative = state.best->eval.score() / seed_eval.score();
    }
    double generation_best = std::numeric_limits<double>::infinity();
    for (const auto& ind : evaluated)
      if (ind.eval.valid()) generation_best = std::min(generation_best, ind.eval.score());
    algorithm->accept(state, std::move(evaluated));
    state.evaluations += evals.size();
    evaluations_this_call += evals.size();
    state.next_generation = gen + 1;
    state.rng = save_rng(rng);
    const auto now = std::chrono::steady_clock::now();
    state.search_seconds += std::chrono::duration<double>(now - generation_start).count();

    const double elapsed = std::chrono::duration<double>(now - start).count();
    ++run_this_call;
    const double per_generation = elapsed / run_this_call;
    const double n = static_cast<double>(proposals.size());
    nlohmann::json gen_line = {
        {"generation", gen},
        {"seed_ms", seed_eval.median_ms},
        {"best_ms", state.best->eval.median_ms},
        {"best_patch", grammar::to_string(state.best->patch)},
        {"speedup", 1.0 / state.best_relative},
        {"generation_best_ratio", std::isfinite(generation_best) ? generation_best / seed_eval.score() : 0.0},
        {"valid_fraction", n > 0 ? valid / n : 0.0},
        {"compiled_fraction", n > 0 ? compiled / n : 0.0},
        {"cached_fraction", n > 0 ? cached / n : 0.0},
        {"same_binary_fraction", n > 0 ? same_binary / n : 0.0},
        {"evaluations", state.evaluations},
        {"evaluations_per_second", elapsed > 0 ? static_cast<double>(evaluations_this_call) / elapsed : 0.0},
        {"elapsed_seconds", elapsed},
        {"data_set", gen / config.data_every},
        {"search_seconds", state.search_seconds},
        {"eta_seconds", eta_seconds(config, state, per_generation)}};
    run.append_generation(gen_line);
    run.write_checkpoint({{"format", "gi-checkpoint-1"}, {"search", to_json(config)}, {"state", to_json(state)}});
    if (options.on_generation) options.on_generation(gen_line);
    if (options.stop_requested && options.stop_requested()) break;
  }
  return state;
}

SearchState resume_state(RunDirectory& run) {
  const auto checkpoint = run.read_checkpoint();
  SearchState state;
  if (checkpoint) {
    try {
      if (checkpoint->value("format", "") != "gi-checkpoint-1")
        throw std::runtime_error("format: expected gi-checkpoint-1");
      state = search_state_from_json(checkpoint->at("state"));
    } catch (const std::exception& e) {
      throw std::runtime_error((run.path() / "checkpoint.json").string() + ": " + e.what());
    }
  }
  run.truncate_logs(state.next_generation);
  return state;
}

}  // namespace gi

#pragma once
// The search's only view of fitness: a batch of patches in, evaluations out.
// The GPU implementation compiles in parallel and runs variants in an
// isolated worker; tests use a deterministic fake.
#include <cstdint>
#include <string>
#include <vector>

#include "gi/evaluate/evaluation.hpp"
#include "gi/evaluate/evaluator_stats.hpp"

namespace gi {

// Launch and compile settings a variant is measured with. Tuned before and
// after evolution so that launch tuning is never credited to code edits.
struct Tuning {
  unsigned block_size = 256;
  std::vector<std::string> options;  // NVRTC options beyond the target
  bool operator==(const Tuning&) const = default;
};

nlohmann::json to_json(const Tuning& t);
Tuning tuning_from_json(const nlohmann::json& j);

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Training inputs change every generation: a fresh generator seed.
  virtual void begin_generation(int generation, std::uint64_t data_seed) = 0;
  // A hint that `generation` with this data seed comes next, so its data can
  // be made while the current generation is evaluated.
  virtual void prefetch_generation(int /*generation*/, std::uint64_t /*data_seed*/) {}
  virtual void set_tuning(const Tuning& tuning) = 0;
  virtual std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) = 0;
};

// What the stages of a run (gi/run/evolution_run.hpp) ask of an evaluator beyond
// the search: a named workload for tuning and minimisation, the seed's time
// (which sets the time-out of later launches) and the counts for the run's
// record. The GPU evaluator is one; tests run every stage on a stand-in.
class StageEvaluator : public Evaluator {
 public:
  // Loads the workloads `which` names ("train": the training set) made with
  // this generator seed.
  virtual void use_workload(const std::string& which, std::uint64_t data_seed) = 0;
  virtual void set_seed_time(double ms) = 0;
  virtual EvaluatorStats stats() const = 0;
};

}  // namespace gi

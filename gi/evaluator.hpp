#pragma once
// The search's only view of fitness: a batch of patches in, evaluations out.
// The GPU implementation compiles in parallel and runs variants in an
// isolated worker; tests use a deterministic fake.
#include <cstdint>
#include <string>
#include <vector>

#include "gi/evaluation.hpp"

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

}  // namespace gi

#pragma once
// The search's only view of fitness: a batch of patches in, evaluations out.
// The GPU implementation compiles in parallel and runs variants in an
// isolated worker; tests use a deterministic fake.
#include <cstdint>
#include <vector>

#include "gi/evaluation.hpp"

namespace gi {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Training inputs change every generation: a fresh generator seed.
  virtual void begin_generation(int generation, std::uint64_t data_seed) = 0;
  virtual std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) = 0;
};

}  // namespace gi

#include "fitness/timing/stopping_criterion.hpp"

#include <stdexcept>

#include "fitness/timing/timing_statistics.hpp"

namespace gi::fitness {

RelativeSpreadCriterion::RelativeSpreadCriterion(int min_samples, double target_relative_spread)
    : min_samples_(min_samples), target_(target_relative_spread) {
  if (min_samples < 1) throw std::invalid_argument("min_samples must be at least 1");
  if (!(target_relative_spread >= 0))
    throw std::invalid_argument("target relative spread must be >= 0");
}

void RelativeSpreadCriterion::add(double sample_ms) { samples_.push_back(sample_ms); }

bool RelativeSpreadCriterion::is_finished() const {
  if (static_cast<int>(samples_.size()) < min_samples_) return false;
  return relative_spread() < target_;
}

double RelativeSpreadCriterion::relative_spread() const {
  return gi::fitness::relative_spread(samples_);
}

}  // namespace gi::fitness

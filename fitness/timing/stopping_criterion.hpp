#pragma once
// When to stop sampling a kernel's time: once there are enough samples and
// the median is known to within a relative spread (the 95% order-statistic
// interval of the median, half its width over the median). The sampling loop
// also stops when its budget or sample cap is spent; that is its business.
#include <vector>

namespace gi::fitness {

class RelativeSpreadCriterion {
 public:
  RelativeSpreadCriterion(int min_samples, double target_relative_spread);

  void add(double sample_ms);
  // At least min_samples and a spread below the target.
  bool is_finished() const;
  // Of the samples so far; infinity before there are any.
  double relative_spread() const;
  const std::vector<double>& samples() const { return samples_; }

 private:
  int min_samples_;
  double target_;
  std::vector<double> samples_;
};

}  // namespace gi::fitness

#pragma once
// Statistics of kernel times: the median, a distribution-free confidence
// interval of the median (order statistics), and the speed-up of one kernel
// over another with a seeded bootstrap lower bound. CPU only.
#include <cstdint>
#include <vector>

#include "fitness/workload/launch_plan.hpp"

namespace gi::fitness {

// Mean of the two middle values for an even count. Throws
// std::invalid_argument when `samples` is empty.
double median(std::vector<double> samples);

struct MedianInterval {
  double low = 0, high = 0;
  double coverage = 0;  // the exact coverage of [low, high] (>= the level asked, unless too few samples)
};

// [x_(k), x_(n+1-k)] of the sorted samples with the largest k whose coverage
// P(x_(k) <= true median <= x_(n+1-k)) = 1 - 2 P(Binomial(n, 1/2) < k) is at
// least `confidence`. With too few samples for that (n < 6 at 95%) it is the
// whole range, with its lower coverage.
MedianInterval median_confidence_interval(std::vector<double> samples, double confidence = 0.95);

// Half the width of the 95% interval of the median over the median: the
// "relative spread" reported for every timing. Infinity for an empty sample
// or a median of zero.
double relative_spread(const std::vector<double>& samples);

// median, spread, min and max of the samples (converged as given).
TimingResult summarize_timing(std::vector<double> samples_ms, bool converged);

// One round of an interleaved comparison: A, then B, in one process.
struct PairedSample {
  double a_ms = 0, b_ms = 0;
};

// median(a) / median(b): above 1 when B is faster.
double speedup(const std::vector<double>& a, const std::vector<double>& b);

// Lower end of the two-sided `confidence` bootstrap interval of
// median(a) / median(b) (percentile method, both samples resampled
// independently). Deterministic for a given seed. B is faster than A beyond
// the noise when this is above 1. Throws std::invalid_argument on an empty sample.
double speedup_ci_low(const std::vector<double>& a, const std::vector<double>& b,
                      std::uint64_t seed = 0x6769u, int resamples = 2000,
                      double confidence = 0.95);
double speedup_ci_low(const std::vector<PairedSample>& pairs, std::uint64_t seed = 0x6769u,
                      int resamples = 2000, double confidence = 0.95);

}  // namespace gi::fitness

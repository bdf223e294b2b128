#include "fitness/timing/timing_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace gi::fitness {

namespace {

double sorted_median(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

// P(Binomial(n, 1/2) = j), in log space so that large n does not underflow.
double binomial_half_pmf(std::size_t n, std::size_t j) {
  const double nd = static_cast<double>(n), jd = static_cast<double>(j);
  return std::exp(std::lgamma(nd + 1) - std::lgamma(jd + 1) - std::lgamma(nd - jd + 1) -
                  nd * std::log(2.0));
}

// The median of `count` values drawn with replacement from `values`.
double resampled_median(const std::vector<double>& values, std::mt19937_64& rng,
                        std::vector<double>& scratch) {
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  scratch.resize(values.size());
  for (double& v : scratch) v = values[pick(rng)];
  const std::size_t n = scratch.size();
  auto middle = scratch.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(scratch.begin(), middle, scratch.end());
  if (n % 2) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(scratch.begin(), middle);
  return 0.5 * (lower + upper);
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("median of no samples");
  std::sort(samples.begin(), samples.end());
  return sorted_median(samples);
}

MedianInterval median_confidence_interval(std::vector<double> samples, double confidence) {
  if (samples.empty()) throw std::invalid_argument("confidence interval of no samples");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("confidence must lie in (0, 1)");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  const double alpha = 1 - confidence;
  // Grow k while the tail probability P(B <= k-1) stays within alpha/2.
  std::size_t k = 1;
  double tail = binomial_half_pmf(n, 0);  // P(B <= k-1) for k = 1
  double tail_used = tail;
  while (k < (n + 1) / 2) {
    const double next_tail = tail + binomial_half_pmf(n, k);  // P(B <= k)
    if (2 * next_tail > alpha) break;
    tail = next_tail;
    ++k;
    tail_used = tail;
  }
  MedianInterval interval;
  interval.low = samples[k - 1];
  interval.high = samples[n - k];
  interval.coverage = std::max(0.0, 1 - 2 * tail_used);
  return interval;
}

double relative_spread(const std::vector<double>& samples) {
  if (samples.empty()) return std::numeric_limits<double>::infinity();
  const double m = median(samples);
  if (m == 0) return std::numeric_limits<double>::infinity();
  const MedianInterval ci = median_confidence_interval(samples);
  return 0.5 * (ci.high - ci.low) / std::abs(m);
}

TimingResult summarize_timing(std::vector<double> samples_ms, bool converged) {
  TimingResult r;
  r.converged = converged;
  if (!samples_ms.empty()) {
    r.median_ms = median(samples_ms);
    r.relative_spread = relative_spread(samples_ms);
    const auto [lo, hi] = std::minmax_element(samples_ms.begin(), samples_ms.end());
    r.min_ms = *lo;
    r.max_ms = *hi;
  } else {
    r.relative_spread = std::numeric_limits<double>::infinity();
  }
  r.samples_ms = std::move(samples_ms);
  return r;
}

double speedup(const std::vector<double>& a, const std::vector<double>& b) {
  return median(a) / median(b);
}

double speedup_ci_low(const std::vector<double>& a, const std::vector<double>& b,
                      std::uint64_t seed, int resamples, double confidence) {
  if (a.empty() || b.empty()) throw std::invalid_argument("speed-up of an empty sample");
  if (resamples < 10) throw std::invalid_argument("speed-up bootstrap needs >= 10 resamples");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("confidence must lie in (0, 1)");
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> scratch;
  for (int i = 0; i < resamples; ++i) {
    const double ma = resampled_median(a, rng, scratch);
    const double mb = resampled_median(b, rng, scratch);
    ratios.push_back(ma / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  const double q = (1 - confidence) / 2;
  const auto index = static_cast<std::size_t>(std::floor(q * static_cast<double>(resamples - 1)));
  return ratios[index];
}

double speedup_ci_low(const std::vector<PairedSample>& pairs, std::uint64_t seed, int resamples,
                      double confidence) {
  std::vector<double> a, b;
  a.reserve(pairs.size());
  b.reserve(pairs.size());
  for (const PairedSample& p : pairs) {
    a.push_back(p.a_ms);
    b.push_back(p.b_ms);
  }
  return speedup_ci_low(a, b, seed, resamples, confidence);
}

}  // namespace gi::fitness

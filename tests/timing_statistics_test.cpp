// Statistics of kernel times (CPU only): median, its order-statistic
// confidence interval, the stopping criterion and the speed-up lower bound.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "fitness/timing/stopping_criterion.hpp"
#include "fitness/timing/timing_statistics.hpp"

namespace {

using namespace gi::fitness;

std::vector<double> noisy(double center, double relative_noise, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, relative_noise);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + noise(rng)));
  return v;
}

TEST(TimingStatistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_THROW(median({}), std::invalid_argument);
}

TEST(TimingStatistics, MedianIntervalUsesTheBinomialOrderStatistics) {
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);  // unsorted on purpose
  // n = 10: [x(2), x(9)], coverage 1 - 2*11/1024.
  const MedianInterval ci10 = median_confidence_interval(ten);
  EXPECT_DOUBLE_EQ(ci10.low, 2);
  EXPECT_DOUBLE_EQ(ci10.high, 9);
  EXPECT_NEAR(ci10.coverage, 1 - 22.0 / 1024, 1e-12);

  // n = 100: the textbook interval [x(40), x(61)].
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  const MedianInterval ci100 = median_confidence_interval(hundred);
  EXPECT_DOUBLE_EQ(ci100.low, 40);
  EXPECT_DOUBLE_EQ(ci100.high, 61);
  EXPECT_GE(ci100.coverage, 0.95);

  // Too few samples for 95%: the whole range, with its true (lower) coverage.
  const MedianInterval ci5 = median_confidence_interval({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(ci5.low, 1);
  EXPECT_DOUBLE_EQ(ci5.high, 5);
  EXPECT_NEAR(ci5.coverage, 1 - 2.0 / 32, 1e-12);
}

TEST(TimingStatistics, MedianIntervalCoversTheTrueMedianAtLeastNinetyFivePercent) {
  // Skewed like kernel times: exponential, true median ln 2.
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> dist(1.0);
  const double truth = std::log(2.0);
  int covered = 0;
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> s(25);
    for (double& x : s) x = dist(rng);
    const MedianInterval ci = median_confidence_interval(s);
    covered += ci.low <= truth && truth <= ci.high;
  }
  EXPECT_GE(covered, static_cast<int>(0.94 * trials));
  EXPECT_LE(covered, static_cast<int>(0.995 * trials));  // not just [min, max]
}

TEST(TimingStatistics, RelativeSpreadIsHalfTheIntervalOverTheMedian) {
  EXPECT_DOUBLE_EQ(relative_spread({2, 2, 2, 2, 2, 2, 2, 2, 2, 2}), 0);
  std::vector<double> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(i);
  EXPECT_DOUBLE_EQ(relative_spread(ten), 0.5 * (9 - 2) / 5.5);
  EXPECT_TRUE(std::isinf(relative_spread({})));
}

TEST(TimingStatistics, SummaryHasMedianSpreadMinMax) {
  const TimingResult r = summarize_timing({1.0, 3.0, 2.0}, true);
  EXPECT_DOUBLE_EQ(r.median_ms, 2);
  EXPECT_DOUBLE_EQ(r.min_ms, 1);
  EXPECT_DOUBLE_EQ(r.max_ms, 3);
  EXPECT_EQ(r.samples_ms.size(), 3u);
  EXPECT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.relative_spread, 0.5);  // n = 3: whole range, (3-1)/2 over 2
}

TEST(TimingStopping, WaitsForMinSamplesEvenWithoutNoise) {
  RelativeSpreadCriterion c(10, 0.01);
  for (int i = 0; i < 9; ++i) {
    c.add(1.0);
    EXPECT_FALSE(c.is_finished()) << "after " << i + 1 << " samples";
  }
  c.add(1.0);
  EXPECT_TRUE(c.is_finished());
}

TEST(TimingStopping, StopsOnLowNoiseAndNotOnHighNoise) {
  RelativeSpreadCriterion quiet(10, 0.01);
  for (double x : noisy(1.0, 0.002, 10, 1)) quiet.add(x);
  EXPECT_TRUE(quiet.is_finished()) << quiet.relative_spread();

  RelativeSpreadCriterion loud(10, 0.01);
  for (double x : noisy(1.0, 0.2, 50, 2)) loud.add(x);
  EXPECT_FALSE(loud.is_finished()) << loud.relative_spread();
  // More samples narrow the interval: 20% noise needs thousands for 1%.
  RelativeSpreadCriterion many(10, 0.05);
  for (double x : noisy(1.0, 0.2, 2000, 3)) many.add(x);
  EXPECT_TRUE(many.is_finished()) << many.relative_spread();
}

TEST(TimingStopping, RejectsNonsense) {
  EXPECT_THROW(RelativeSpreadCriterion(0, 0.01), std::invalid_argument);
  EXPECT_THROW(RelativeSpreadCriterion(10, -1), std::invalid_argument);
}

TEST(TimingSpeedup, TwentyPercentFasterIsDetected) {
  const std::vector<double> a = noisy(1.0, 0.02, 20, 11);
  const std::vector<double> b = noisy(0.8, 0.02, 20, 12);
  EXPECT_NEAR(speedup(a, b), 1.25, 0.03);
  const double low = speedup_ci_low(a, b);
  EXPECT_GT(low, 1.15);
  EXPECT_LT(low, speedup(a, b));
}

TEST(TimingSpeedup, IdenticalDistributionsRarelyLookFaster) {
  int false_positives = 0;
  const int trials = 200;
  for (int t = 0; t < trials; ++t) {
    const std::vector<double> a = noisy(1.0, 0.02, 20, 1000 + 2 * t);
    const std::vector<double> b = noisy(1.0, 0.02, 20, 1001 + 2 * t);
    false_positives += speedup_ci_low(a, b, t) > 1.0;
  }
  // A two-sided 95% interval: about 2.5% expected above 1.
  EXPECT_LE(false_positives, trials / 10);
}

TEST(TimingSpeedup, SmallImprovementInLargeNoiseIsNotClaimed) {
  const std::vector<double> a = noisy(1.0, 0.10, 10, 21);
  const std::vector<double> b = noisy(0.99, 0.10, 10, 22);
  EXPECT_LE(speedup_ci_low(a, b), 1.0);
}

TEST(TimingSpeedup, DeterministicForASeed) {
  const std::vector<double> a = noisy(1.0, 0.05, 15, 31);
  const std::vector<double> b = noisy(0.9, 0.05, 15, 32);
  EXPECT_EQ(speedup_ci_low(a, b, 7), speedup_ci_low(a, b, 7));
  std::vector<PairedSample> pairs;
  for (std::size_t i = 0; i < a.size(); ++i) pairs.push_back({a[i], b[i]});
  EXPECT_EQ(speedup_ci_low(pairs, 7), speedup_ci_low(a, b, 7));
  EXPECT_THROW(speedup_ci_low({}, b), std::invalid_argument);
}

}  // namespace

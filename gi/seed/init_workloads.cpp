#include "gi/seed/init_workloads.hpp"

#include <cmath>

namespace gi {
namespace {

// `drafted` made usable: the given values put back, the last size first.
SizeSet usable_or_given(SizeSet drafted, const SizeSet& given, const std::vector<std::string>& size_names,
                        const UsableSizes& usable) {
  if (!usable || usable(drafted)) return drafted;
  for (auto n = size_names.rbegin(); n != size_names.rend(); ++n) {
    drafted[*n] = given.at(*n);
    if (usable(drafted)) return drafted;
  }
  return given;
}

// v as the nearest multiple of `name`'s number, at least that number.
double kept_multiple(const std::string& name, double v, const SizeMultiples& multiples) {
  const auto m = multiples.find(name);
  if (m == multiples.end()) return v;
  return std::max(m->second, std::round(v / m->second) * m->second);
}

}  // namespace

SizeSet small_check_sizes(const SizeSet& given, const std::vector<std::string>& size_names, const UsableSizes& usable,
                          const SizeMultiples& multiples, const std::map<std::string, double>& past) {
  SizeSet out = given;
  static const double primes[] = {37, 29, 13, 11, 7, 5};
  for (std::size_t i = 0; i < size_names.size(); ++i) {
    const double odd = size_names.size() == 1 ? 1003 : primes[std::min<std::size_t>(i, 5)];
    const auto p = past.find(size_names[i]);
    out[size_names[i]] = multiples.count(size_names[i])        ? multiples.at(size_names[i])
                         : p != past.end() && odd <= p->second ? p->second + odd
                                                               : odd;
  }
  return usable_or_given(out, given, size_names, usable);
}

std::vector<SizeSet> held_out_sizes(const SizeSet& given, const std::vector<std::string>& size_names,
                                    const std::function<double(const SizeSet&)>& values, double required,
                                    const UsableSizes& usable, const SizeMultiples& multiples) {
  // Factors per workload; variable i of workload w takes factors[(w + i) % 5],
  // so two-dimensional sizes change their aspect as well as their area.
  static const double factors[] = {1.0, 0.75, 1.3, 0.55, 1.6};
  std::vector<SizeSet> out(5, given);
  // The sets at `scale`, and which were usable as scaled (one that is not
  // has the given values back).
  const auto fill = [&](double scale) {
    std::vector<bool> as_scaled;
    for (int w = 0; w < 5; ++w)
      for (std::size_t i = 0; i < size_names.size(); ++i) {
        double v = std::max(1.0, std::round(given.at(size_names[i]) * factors[(w + i) % 5] * scale));
        // Odd sizes (no multiple of any block size) on the first workload,
        // a power-of-two-friendly one on the second: both edges reached.
        if (w == 0 && std::fmod(v, 2.0) == 0) v += 1;
        out[w][size_names[i]] = kept_multiple(size_names[i], v, multiples);
      }
    for (SizeSet& s : out) {
      as_scaled.push_back(!usable || usable(s));
      s = usable_or_given(s, given, size_names, usable);
    }
    return as_scaled;
  };
  double scale = 1;
  std::vector<bool> usable_now = fill(scale);
  for (int step = 0; step < 40; ++step) {
    double total = 0;
    for (const SizeSet& s : out) total += values(s);
    if (total >= required || total <= 0) break;
    // Grow every size by the same factor: with d size variables the values
    // grow about as its d-th power.
    const double d = static_cast<double>(std::max<std::size_t>(1, size_names.size()));
    const double grown = scale * std::max(1.05, std::pow(required / total, 1.0 / d) * 1.01);
    // A set that was usable and is not once grown (a size past what its
    // type holds): the largest scale between that keeps them (halving the
    // gap), and fewer values than required.
    const auto loses = [&](const std::vector<bool>& at) {
      for (std::size_t w = 0; w < at.size(); ++w)
        if (usable_now[w] && !at[w]) return true;
      return false;
    };
    const std::vector<bool> usable_grown = fill(grown);
    if (loses(usable_grown)) {
      double low = scale, high = grown;
      for (int halving = 0; halving < 30; ++halving) {
        const double middle = (low + high) / 2;
        (loses(fill(middle)) ? high : low) = middle;
      }
      fill(low);
      break;
    }
    scale = grown;
    usable_now = usable_grown;
  }
  return out;
}

}  // namespace gi

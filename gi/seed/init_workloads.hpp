#pragma once
// The workload sizes `gi init` drafts from the one size a user gives: a small
// check whose sizes are no multiple of any block size (so the last block's
// guard is reached), and five held-out workloads that vary the shape (each
// size variable scaled by a different factor) and together hold at least
// the values validation asks for.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gi {

using SizeSet = std::map<std::string, double>;

// Small odd sizes for the named size variables (1003 for one, else primes
// 37, 29, 13, ... in name order; a size with a multiple takes the multiple
// itself); other variables keep their values.
// `usable`: whether a size set gives every grid extent and buffer count at
// least 1 (a kernel such as `i < Size - t - 1` needs t below Size): a drafted
// set that is not keeps, one variable after another from the last, the
// given values, and is the given set when that does not help either.
using UsableSizes = std::function<bool(const SizeSet&)>;

// `multiples`: sizes that must stay a multiple of a number (an exact
// launch's thread count on x, a multiple of every block size): each drafted
// value is rounded to the nearest one, at least the number itself.
using SizeMultiples = std::map<std::string, double>;

// `past`: sizes whose odd value, where it is no more than the number given,
// is raised by that number (the bound of a grid whose block is fixed at K:
// K, so that a full block runs beside the partial last).
SizeSet small_check_sizes(const SizeSet& given, const std::vector<std::string>& size_names,
                          const UsableSizes& usable = {}, const SizeMultiples& multiples = {},
                          const std::map<std::string, double>& past = {});

// Five held-out size sets: the size variables scaled (a different factor per
// variable and workload, the first odd), then all scaled up together until
// `values` (the values a workload checks, from its sizes) sums to at least
// `required` over the five, or until growing would make a set that was
// usable unusable (a size past what its type holds): then fewer.
std::vector<SizeSet> held_out_sizes(const SizeSet& given, const std::vector<std::string>& size_names,
                                    const std::function<double(const SizeSet&)>& values, double required,
                                    const UsableSizes& usable = {}, const SizeMultiples& multiples = {});

}  // namespace gi

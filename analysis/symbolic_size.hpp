#pragma once
// Sizes as polynomials over a kernel's integer parameters (nx * ny * nz,
// 4 * n + 1): what `gi init` infers an index's range and a buffer's element
// count as. Only + - * by whole numbers, exact division by a product of
// names, and the rounded-up quotient `ceil_div(a, d)` as a name of its own
// (a coarse grid's extent: voxel z of nz at z / spacing reaches
// ceil_div(nz, spacing) - 1): enough for the index arithmetic kernels write
// (row * cols + c, index / (nx * ny)), and anything else is refused by the
// caller.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gi::analysis {

class SymbolicSize {
 public:
  SymbolicSize() = default;
  static SymbolicSize constant(long long c);
  static SymbolicSize name(const std::string& n);
  // ceil(a / d), a >= 1 and d >= 1: a name "ceil_div(a, d)" that names()
  // and evaluate() see through, and that, as every name, is at least 1.
  static SymbolicSize ceil_div(const SymbolicSize& a, const SymbolicSize& d);
  // max(a, b), a >= 1 and b >= 1: a name "max(a, b)" seen through likewise
  // (a buffer two accesses need, neither provably the larger, holds both).
  static SymbolicSize max_of(const SymbolicSize& a, const SymbolicSize& b);

  SymbolicSize operator+(const SymbolicSize& o) const;
  SymbolicSize operator-(const SymbolicSize& o) const;
  SymbolicSize operator*(const SymbolicSize& o) const;
  // this / d when d is one term (c * a * b ...) that divides every term
  // exactly; nullopt otherwise.
  std::optional<SymbolicSize> divided_by(const SymbolicSize& d) const;

  bool operator==(const SymbolicSize& o) const { return terms_ == o.terms_; }
  bool is_constant() const;
  long long constant_part() const;
  // Every coefficient >= 0: the value is >= 0 when every name is (sizes are).
  bool non_negative() const;
  // >= 0 whenever every name is >= 1 (names are sizes): width - 1, nx * ny - 1;
  // a max(p, q) name counts as p and as q (nx - max(1, nx - 1)).
  bool non_negative_for_sizes() const;
  // Whether this is one term: c * names.
  bool is_monomial() const { return terms_.size() == 1; }
  // "nx * ny * nz", "4 * n + 8", "0".
  std::string text() const;
  // The names it is over (those inside a ceil_div, not the ceil_div).
  std::vector<std::string> names() const;
  // Each term: its names (sorted; repeated for powers; none for the
  // constant) and its coefficient, never 0.
  const std::map<std::vector<std::string>, long long>& terms() const { return terms_; }
  // The value with every name given; nullopt when one is missing.
  std::optional<double> evaluate(const std::map<std::string, double>& values) const;

 private:
  // Every occurrence of the name n replaced by value.
  SymbolicSize substituted(const std::string& n, const SymbolicSize& value) const;
  static SymbolicSize over(const char* function, const SymbolicSize& a, const SymbolicSize& b);
  // sorted names (a product; repeated for powers) -> coefficient; no zero coefficients
  std::map<std::vector<std::string>, long long> terms_;
};

}  // namespace gi::analysis

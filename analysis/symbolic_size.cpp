#include "analysis/symbolic_size.hpp"

#include <algorithm>
#include <set>

namespace gi::analysis {

SymbolicSize SymbolicSize::constant(long long c) {
  SymbolicSize s;
  if (c != 0) s.terms_[{}] = c;
  return s;
}

SymbolicSize SymbolicSize::name(const std::string& n) {
  SymbolicSize s;
  s.terms_[{n}] = 1;
  return s;
}

SymbolicSize SymbolicSize::operator+(const SymbolicSize& o) const {
  SymbolicSize s = *this;
  for (const auto& [names, c] : o.terms_)
    if ((s.terms_[names] += c) == 0) s.terms_.erase(names);
  return s;
}

SymbolicSize SymbolicSize::operator-(const SymbolicSize& o) const { return *this + o * constant(-1); }

SymbolicSize SymbolicSize::operator*(const SymbolicSize& o) const {
  SymbolicSize s;
  for (const auto& [a, ca] : terms_)
    for (const auto& [b, cb] : o.terms_) {
      std::vector<std::string> names = a;
      names.insert(names.end(), b.begin(), b.end());
      std::sort(names.begin(), names.end());
      if ((s.terms_[names] += ca * cb) == 0) s.terms_.erase(names);
    }
  return s;
}

std::optional<SymbolicSize> SymbolicSize::divided_by(const SymbolicSize& d) const {
  if (!d.is_monomial()) return std::nullopt;
  const auto& [dn, dc] = *d.terms_.begin();
  SymbolicSize s;
  for (const auto& [names, c] : terms_) {
    if (c % dc != 0) return std::nullopt;
    std::multiset<std::string> left(names.begin(), names.end());
    for (const std::string& n : dn) {
      const auto it = left.find(n);
      if (it == left.end()) return std::nullopt;
      left.erase(it);
    }
    s.terms_[std::vector<std::string>(left.begin(), left.end())] = c / dc;
  }
  return s;
}

bool SymbolicSize::is_constant() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }

long long SymbolicSize::constant_part() const {
  const auto it = terms_.find({});
  return it == terms_.end() ? 0 : it->second;
}

bool SymbolicSize::non_negative() const {
  return std::all_of(terms_.begin(), terms_.end(), [](const auto& t) { return t.second >= 0; });
}

bool SymbolicSize::non_negative_for_sizes() const {
  // Substitute n = 1 + n' for every name and look at the coefficients.
  SymbolicSize shifted;
  for (const auto& [names, c] : terms_) {
    SymbolicSize term = constant(c);
    for (const std::string& n : names) term = term * (constant(1) + name(n));
    shifted = shifted + term;
  }
  return shifted.non_negative();
}

std::string SymbolicSize::text() const {
  if (terms_.empty()) return "0";
  // Highest degree first, the constant last: "nx * ny + 2 * nx + 1".
  std::vector<std::pair<std::vector<std::string>, long long>> order(terms_.begin(), terms_.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out;
  for (const auto& [names, c] : order) {
    const long long magnitude = c < 0 ? -c : c;
    std::string term;
    if (names.empty() || magnitude != 1) term = std::to_string(magnitude);
    for (const std::string& n : names) term += (term.empty() ? "" : " * ") + n;
    if (out.empty()) out = (c < 0 ? "-" : "") + term;
    else out += (c < 0 ? " - " : " + ") + term;
  }
  return out;
}

std::vector<std::string> SymbolicSize::names() const {
  std::set<std::string> all;
  for (const auto& [names, c] : terms_) all.insert(names.begin(), names.end());
  return {all.begin(), all.end()};
}

std::optional<double> SymbolicSize::evaluate(const std::map<std::string, double>& values) const {
  double sum = 0;
  for (const auto& [names, c] : terms_) {
    double term = static_cast<double>(c);
    for (const std::string& n : names) {
      const auto it = values.find(n);
      if (it == values.end()) return std::nullopt;
      term *= it->second;
    }
    sum += term;
  }
  return sum;
}

}  // namespace gi::analysis

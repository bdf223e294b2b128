#include "analysis/symbolic_size.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

namespace gi::analysis {
namespace {

// The operands behind each "ceil_div(a, d)" and "max(a, b)" name made so far.
struct Quotients {
  std::mutex mutex;
  std::map<std::string, std::pair<SymbolicSize, SymbolicSize>> by_name;
};

Quotients& quotients() {
  static Quotients q;
  return q;
}

// A "ceil_div(" or "max(" name's operands.
std::optional<std::pair<SymbolicSize, SymbolicSize>> quotient(const std::string& name) {
  if (name.rfind("ceil_div(", 0) != 0 && name.rfind("max(", 0) != 0) return std::nullopt;
  Quotients& q = quotients();
  const std::lock_guard<std::mutex> lock(q.mutex);
  const auto it = q.by_name.find(name);
  if (it == q.by_name.end()) return std::nullopt;
  return it->second;
}

}  // namespace

// The name "FUNCTION(a, b)", its operands kept for names() and evaluate().
SymbolicSize SymbolicSize::over(const char* function, const SymbolicSize& a, const SymbolicSize& b) {
  const std::string n = std::string(function) + "(" + a.text() + ", " + b.text() + ")";
  Quotients& q = quotients();
  const std::lock_guard<std::mutex> lock(q.mutex);
  q.by_name.emplace(n, std::make_pair(a, b));
  return name(n);
}

SymbolicSize SymbolicSize::ceil_div(const SymbolicSize& a, const SymbolicSize& d) { return over("ceil_div", a, d); }

SymbolicSize SymbolicSize::max_of(const SymbolicSize& a, const SymbolicSize& b) {
  if ((a - b).non_negative_for_sizes()) return a;
  if ((b - a).non_negative_for_sizes()) return b;
  // max(max(p, q), b): p or q that b covers is dropped (max(max(1, n - 1), n) is n).
  for (const auto& [x, y] : {std::make_pair(&a, &b), std::make_pair(&b, &a)}) {
    if (x->terms_.size() != 1 || x->terms_.begin()->first.size() != 1 || x->terms_.begin()->second != 1) continue;
    const auto pq = quotient(x->terms_.begin()->first[0]);
    if (!pq || x->terms_.begin()->first[0].rfind("max(", 0) != 0) continue;
    const bool covers_p = (*y - pq->first).non_negative_for_sizes(), covers_q = (*y - pq->second).non_negative_for_sizes();
    if (covers_p && covers_q) return *y;
    if (covers_p) return max_of(pq->second, *y);
    if (covers_q) return max_of(pq->first, *y);
  }
  return over("max", a, b);
}

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
  if (shifted.non_negative()) return true;
  // A max(p, q) name is p or q: the value is never negative when it is not
  // with either in its place (nx - max(1, nx - 1) is 1 or nx - (nx - 1)).
  // Where every term that holds it adds (the other names being at least 1),
  // the value only grows with it, and one of the two suffices:
  // max(nz, 2) * s - nz * s + s is at least s with nz in its place.
  for (const auto& [names, c] : terms_)
    for (const std::string& n : names)
      if (n.rfind("max(", 0) == 0)
        if (const auto pq = quotient(n)) {
          bool grows = true;
          for (const auto& [others, d] : terms_)
            if (d < 0 && std::find(others.begin(), others.end(), n) != others.end()) grows = false;
          const bool with_p = substituted(n, pq->first).non_negative_for_sizes();
          if (grows && with_p) return true;
          const bool with_q = substituted(n, pq->second).non_negative_for_sizes();
          return grows ? with_q : with_p && with_q;
        }
  return false;
}

SymbolicSize SymbolicSize::substituted(const std::string& n, const SymbolicSize& value) const {
  SymbolicSize out;
  for (const auto& [names, c] : terms_) {
    SymbolicSize term = constant(c);
    for (const std::string& m : names) term = term * (m == n ? value : name(m));
    out = out + term;
  }
  return out;
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
  for (const auto& [names, c] : terms_)
    for (const std::string& n : names) {
      const auto q = quotient(n);
      if (!q) {
        all.insert(n);
        continue;
      }
      for (const std::string& inner : q->first.names()) all.insert(inner);
      for (const std::string& inner : q->second.names()) all.insert(inner);
    }
  return {all.begin(), all.end()};
}

std::optional<double> SymbolicSize::evaluate(const std::map<std::string, double>& values) const {
  double sum = 0;
  for (const auto& [names, c] : terms_) {
    double term = static_cast<double>(c);
    for (const std::string& n : names) {
      if (const auto q = quotient(n)) {
        const auto a = q->first.evaluate(values), d = q->second.evaluate(values);
        if (n.rfind("max(", 0) == 0) {
          if (!a || !d) return std::nullopt;
          term *= std::max(*a, *d);
          continue;
        }
        if (!a || !d || *d == 0) return std::nullopt;
        term *= std::ceil(*a / *d);
        continue;
      }
      const auto it = values.find(n);
      if (it == values.end()) return std::nullopt;
      term *= it->second;
    }
    sum += term;
  }
  return sum;
}

}  // namespace gi::analysis

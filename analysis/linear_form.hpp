#pragma once
// An integer expression as a sum of terms with whole-number coefficients:
// `x - 1 + 2 * (y + x)` is 3·x + 2·y - 1. Interval arithmetic forgets that
// two occurrences of one name hold the same value, so `k0 + (v - s)` with
// `k0 = base + x - 1` and `s = x - 1` would get x's whole range twice; the
// linear form cancels x first and leaves `base + v`.
// Only +, -, unary minus, casts and products with a whole-number literal
// are opened; anything else (a product of two names, a call, a division)
// is one term, keyed by its text.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/expression.hpp"

namespace gi::analysis {

struct LinearTerm {
  long long coefficient = 0;
  Expr atom;
};

struct LinearForm {
  std::map<std::string, LinearTerm> terms;  // keyed by the atom's text; no zero coefficients
  long long constant = 0;

  // this + factor * other, dropping terms that cancel.
  void add(const LinearForm& other, long long factor = 1);
};

LinearForm linear_form(const std::vector<grammar::Token>& tokens, const Expr& e);

}  // namespace gi::analysis

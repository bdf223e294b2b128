#include "analysis/linear_form.hpp"

namespace gi::analysis {

void LinearForm::add(const LinearForm& other, long long factor) {
  constant += factor * other.constant;
  for (const auto& [key, term] : other.terms) {
    auto [it, fresh] = terms.try_emplace(key, LinearTerm{0, term.atom});
    it->second.coefficient += factor * term.coefficient;
    if (it->second.coefficient == 0) terms.erase(it);
  }
}

LinearForm linear_form(const std::vector<grammar::Token>& tokens, const Expr& e) {
  LinearForm out;
  if (const auto v = whole_literal(e)) {
    out.constant = *v;
    return out;
  }
  // A cast keeps the value, as parameter_use's ranges take it: `(int)(x - 1)`
  // is x - 1 (an index's arithmetic stays within its type).
  if (e.kind == ExprKind::Cast && e.children.size() == 1) return linear_form(tokens, e.children[0]);
  if (e.kind == ExprKind::Unary && e.children.size() == 1 && (e.text == "-" || e.text == "+")) {
    out.add(linear_form(tokens, e.children[0]), e.text == "-" ? -1 : 1);
    return out;
  }
  if (e.kind == ExprKind::Binary && e.children.size() == 2) {
    if (e.text == "+" || e.text == "-") {
      out.add(linear_form(tokens, e.children[0]));
      out.add(linear_form(tokens, e.children[1]), e.text == "-" ? -1 : 1);
      return out;
    }
    if (e.text == "*") {
      const auto a = whole_literal(e.children[0]), b = whole_literal(e.children[1]);
      if (a || b) {
        out.add(linear_form(tokens, a ? e.children[1] : e.children[0]), a ? *a : *b);
        return out;
      }
    }
  }
  out.terms.emplace(expression_text(tokens, e), LinearTerm{1, e});
  return out;
}

}  // namespace gi::analysis

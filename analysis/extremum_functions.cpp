#include "analysis/extremum_functions.hpp"

#include "analysis/expression.hpp"
#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

// What a file function of two parameters returns, if it is one statement
// `return a OP b ? X : Y;` that picks the larger or smaller of a and b.
std::string kind_of(const grammar::ParsedKernel& k, int function) {
  const grammar::Function& f = k.functions[static_cast<std::size_t>(function)];
  if (f.is_kernel || f.params.size() != 2 || f.params[0].pointer || f.params[1].pointer) return "";
  const std::string& a = f.params[0].name;
  const std::string& b = f.params[1].name;
  const grammar::Element* only = nullptr;
  for (const grammar::Element& e : k.elements) {
    if (e.function != function || e.kind == ElementKind::Comment || e.kind == ElementKind::BlockOpen ||
        e.kind == ElementKind::BlockClose ||
        &e == &k.elements[static_cast<std::size_t>(f.header_element)])
      continue;
    if (e.kind != ElementKind::Statement || only) return "";
    only = &e;
  }
  if (!only) return "";
  std::size_t first = next_code(k.tokens, only->tokens.first), last = only->tokens.last;
  while (last > first && (k.tokens[last].is(";") || k.tokens[last].is("}") || k.tokens[last].kind == TokenKind::Comment))
    --last;
  if (!k.tokens[first].is("return")) return "";
  const auto x = parse_expression(k.tokens, first + 1, last);
  if (!x || x->kind != ExprKind::Ternary || x->children.size() != 3) return "";
  const Expr& test = x->children[0];
  if (test.kind != ExprKind::Binary) return "";
  const std::string& op = test.text;
  if (op != ">" && op != ">=" && op != "<" && op != "<=") return "";
  // Orient the test as `a OP b`.
  bool larger = op[0] == '>';
  if (test.children[0].is_name(b) && test.children[1].is_name(a)) larger = !larger;
  else if (!(test.children[0].is_name(a) && test.children[1].is_name(b))) return "";
  const Expr& then = x->children[1];
  const Expr& otherwise = x->children[2];
  // `a > b ? a : b` is the larger; `a > b ? b : a` the smaller.
  if (then.is_name(a) && otherwise.is_name(b)) return larger ? "max" : "min";
  if (then.is_name(b) && otherwise.is_name(a)) return larger ? "min" : "max";
  return "";
}

}  // namespace

std::map<std::string, std::string> find_extremum_functions(const grammar::ParsedKernel& k) {
  std::map<std::string, std::string> out = {{"fmaxf", "max"}, {"fmax", "max"}, {"max", "max"},
                                            {"fminf", "min"}, {"fmin", "min"}, {"min", "min"}};
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].header_element >= 0)
      if (const std::string kind = kind_of(k, static_cast<int>(f)); !kind.empty()) out[k.functions[f].name] = kind;
  return out;
}

}  // namespace gi::analysis

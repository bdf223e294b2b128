#pragma once
// A tiny, safe arithmetic expression over named variables, used by kernel
// specs for element counts, scalar values and launch geometry
// ("ceil_div(activeVoxelNumber, B)"). Grammar:
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//   number  := digits ['.' digits] | '.' digits
//
// Functions: ceil_div(a, b), min(a, b), max(a, b), floor(x), ceil(x).
// Values are doubles; '%' is the remainder of truncated division (fmod).
// Nothing is executed but arithmetic: no loops, no assignment, bounded depth.
// Every error is a std::runtime_error naming the expression and the 1-based
// character position where it went wrong.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gi::fitness {

using Variables = std::map<std::string, double>;

class Expression {
 public:
  Expression() = default;  // the constant 0
  // Throws std::runtime_error on bad syntax, an unknown function or a wrong
  // number of arguments.
  static Expression parse(std::string_view text);
  static Expression constant(double value);

  // Throws std::runtime_error on an unknown variable, division (or remainder,
  // or ceil_div) by zero, or a non-finite result.
  double evaluate(const Variables& variables) const;

  const std::string& text() const { return text_; }
  // The distinct variable names the expression reads, sorted.
  std::vector<std::string> variables() const;

  enum class Op { Number, Variable, Negate, Add, Sub, Mul, Div, Mod, CeilDiv, Min, Max, Floor, Ceil };
  struct Node {
    Op op = Op::Number;
    double value = 0;
    std::string name;     // Variable
    std::size_t position = 0;  // 1-based, for messages
  };

 private:
  std::string text_ = "0";
  std::vector<Node> program_{Node{}};  // postfix order

  friend class ExpressionParser;
};

// Parses and evaluates in one step.
double evaluate_expression(std::string_view text, const Variables& variables);

}  // namespace gi::fitness

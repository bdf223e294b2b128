#include "fitness/workload/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace gi::fitness {

namespace {

constexpr int kMaxDepth = 64;  // nesting of parentheses, calls and unary signs

std::runtime_error expression_error(std::string_view text, std::size_t position,
                                    const std::string& what) {
  return std::runtime_error("expression '" + std::string(text) + "' at position " +
                            std::to_string(position) + ": " + what);
}

struct Function {
  std::string_view name;
  Expression::Op op;
  int arity;
};

constexpr Function kFunctions[] = {
    {"ceil_div", Expression::Op::CeilDiv, 2}, {"min", Expression::Op::Min, 2},
    {"max", Expression::Op::Max, 2},          {"floor", Expression::Op::Floor, 1},
    {"ceil", Expression::Op::Ceil, 1},
};

}  // namespace

// Recursive descent straight into postfix code.
class ExpressionParser {
 public:
  explicit ExpressionParser(std::string_view text) : text_(text) {}

  Expression run() {
    Expression e;
    e.text_ = std::string(text_);
    e.program_.clear();
    out_ = &e.program_;
    skip_blanks();
    if (at_end()) throw error("expected an expression, found nothing");
    expr(0);
    skip_blanks();
    if (!at_end()) throw error("unexpected '" + std::string(1, text_[pos_]) + "' after a complete expression");
    return e;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::vector<Expression::Node>* out_ = nullptr;

  bool at_end() const { return pos_ >= text_.size(); }
  std::size_t column() const { return pos_ + 1; }
  std::runtime_error error(const std::string& what) const { return expression_error(text_, column(), what); }
  void skip_blanks() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_blanks();
    if (!at_end() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void emit(Expression::Op op, std::size_t position) {
    Expression::Node n;
    n.op = op;
    n.position = position;
    out_->push_back(std::move(n));
  }
  void check_depth(int depth) const {
    if (depth > kMaxDepth) throw error("nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  void expr(int depth) {
    term(depth);
    for (;;) {
      skip_blanks();
      const std::size_t at = column();
      if (accept('+')) {
        term(depth);
        emit(Expression::Op::Add, at);
      } else if (accept('-')) {
        term(depth);
        emit(Expression::Op::Sub, at);
      } else {
        return;
      }
    }
  }

  void term(int depth) {
    unary(depth);
    for (;;) {
      skip_blanks();
      const std::size_t at = column();
      Expression::Op op;
      if (accept('*')) op = Expression::Op::Mul;
      else if (accept('/')) op = Expression::Op::Div;
      else if (accept('%')) op = Expression::Op::Mod;
      else return;
      unary(depth);
      emit(op, at);
    }
  }

  void unary(int depth) {
    check_depth(depth);
    skip_blanks();
    const std::size_t at = column();
    if (accept('-')) {
      unary(depth + 1);
      emit(Expression::Op::Negate, at);
    } else if (accept('+')) {
      unary(depth + 1);
    } else {
      primary(depth);
    }
  }

  void primary(int depth) {
    skip_blanks();
    if (at_end()) throw error("expected a number, a name or '(', found the end");
    const char c = text_[pos_];
    const std::size_t at = column();
    if (c == '(') {
      ++pos_;
      expr(depth + 1);
      if (!accept(')')) throw error("expected ')' to close the '(' at position " + std::to_string(at));
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      number();
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
      const std::string name(text_.substr(pos_, end - pos_));
      pos_ = end;
      skip_blanks();
      if (!at_end() && text_[pos_] == '(') {
        call(name, at, depth);
        return;
      }
      Expression::Node n;
      n.op = Expression::Op::Variable;
      n.name = name;
      n.position = at;
      out_->push_back(std::move(n));
      return;
    }
    throw error("expected a number, a name or '(', found '" + std::string(1, c) + "'");
  }

  void number() {
    const std::size_t start = pos_;
    std::size_t digits = 0;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_, ++digits;
    if (!at_end() && text_[pos_] == '.') {
      ++pos_;
      std::size_t fraction = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_, ++fraction;
      if (fraction == 0) throw error("expected a digit after the decimal point");
      digits += fraction;
    }
    if (digits == 0) throw expression_error(text_, start + 1, "expected a number");
    if (!at_end() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      throw error("a number must not run into a name (missing operator?)");
    Expression::Node n;
    n.op = Expression::Op::Number;
    const std::string literal(text_.substr(start, pos_ - start));
    n.value = std::strtod(literal.c_str(), nullptr);
    if (!std::isfinite(n.value)) throw expression_error(text_, start + 1, "number out of range");
    n.position = start + 1;
    out_->push_back(std::move(n));
  }

  void call(const std::string& name, std::size_t at, int depth) {
    const Function* f = nullptr;
    for (const Function& candidate : kFunctions)
      if (candidate.name == name) f = &candidate;
    if (f == nullptr)
      throw expression_error(text_, at, "unknown function '" + name +
                                            "' (expected ceil_div, min, max, floor or ceil)");
    ++pos_;  // '('
    int arguments = 0;
    skip_blanks();
    if (!accept(')')) {
      for (;;) {
        expr(depth + 1);
        ++arguments;
        if (accept(')')) break;
        if (!accept(',')) throw error("expected ',' or ')' in the arguments of " + name);
      }
    }
    if (arguments != f->arity)
      throw expression_error(text_, at, name + " expects " + std::to_string(f->arity) + " argument" +
                                            (f->arity == 1 ? "" : "s") + ", got " +
                                            std::to_string(arguments));
    emit(f->op, at);
  }
};

Expression Expression::parse(std::string_view text) { return ExpressionParser(text).run(); }

Expression Expression::constant(double value) {
  Expression e;
  e.program_[0].value = value;
  e.program_[0].position = 1;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  e.text_ = buf;
  return e;
}

std::vector<std::string> Expression::variables() const {
  std::set<std::string> names;
  for (const Node& n : program_)
    if (n.op == Op::Variable) names.insert(n.name);
  return {names.begin(), names.end()};
}

double Expression::evaluate(const Variables& variables) const {
  std::vector<double> stack;
  stack.reserve(program_.size());
  auto fail = [&](const Node& n, const std::string& what) { return expression_error(text_, n.position, what); };
  for (const Node& n : program_) {
    switch (n.op) {
      case Op::Number:
        stack.push_back(n.value);
        continue;
      case Op::Variable: {
        const auto it = variables.find(n.name);
        if (it == variables.end()) {
          std::string known;
          for (const auto& [name, value] : variables) known += (known.empty() ? "" : ", ") + name;
          throw fail(n, "unknown variable '" + n.name + "' (known: " + (known.empty() ? "none" : known) + ")");
        }
        stack.push_back(it->second);
        continue;
      }
      case Op::Negate:
        stack.back() = -stack.back();
        continue;
      case Op::Floor:
        stack.back() = std::floor(stack.back());
        continue;
      case Op::Ceil:
        stack.back() = std::ceil(stack.back());
        continue;
      default:
        break;
    }
    const double b = stack.back();
    stack.pop_back();
    double& a = stack.back();
    switch (n.op) {
      case Op::Add: a = a + b; break;
      case Op::Sub: a = a - b; break;
      case Op::Mul: a = a * b; break;
      case Op::Div:
        if (b == 0) throw fail(n, "division by zero");
        a = a / b;
        break;
      case Op::Mod:
        if (b == 0) throw fail(n, "remainder by zero");
        a = std::fmod(a, b);
        break;
      case Op::CeilDiv:
        if (b == 0) throw fail(n, "ceil_div by zero");
        a = std::ceil(a / b);
        break;
      case Op::Min: a = std::min(a, b); break;
      case Op::Max: a = std::max(a, b); break;
      default: break;
    }
    if (!std::isfinite(a)) throw fail(n, "the result of this operation is not a finite number");
  }
  const double result = stack.back();
  if (!std::isfinite(result))
    throw expression_error(text_, 1, "the result is not a finite number");
  return result;
}

double evaluate_expression(std::string_view text, const Variables& variables) {
  return Expression::parse(text).evaluate(variables);
}

}  // namespace gi::fitness

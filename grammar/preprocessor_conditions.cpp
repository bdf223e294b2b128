#include "grammar/preprocessor_conditions.hpp"

#include <cctype>
#include <exception>
#include <vector>

namespace gi::grammar {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Integer constant expressions of the preprocessor over known values (see
// evaluate_condition). nullopt: it reads something unknown: leave it alone.
class ConditionEvaluator {
 public:
  ConditionEvaluator(std::string_view text, const std::map<std::string, std::string>& values)
      : text_(text), values_(values) {}

  std::optional<std::int64_t> evaluate() {
    const auto v = binary(0);
    skip();
    if (!v || at_ != text_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(std::string_view op) {
    skip();
    if (text_.substr(at_, op.size()) != op) return false;
    at_ += op.size();
    return true;
  }
  std::optional<std::string> name() {
    skip();
    const std::size_t start = at_;
    if (at_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      while (at_ < text_.size() && ident_char(text_[at_])) ++at_;
    if (at_ == start) return std::nullopt;
    return std::string(text_.substr(start, at_ - start));
  }
  std::optional<std::int64_t> value_of(const std::string& n) const {
    const auto it = values_.find(n);
    if (it == values_.end()) return std::nullopt;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(it->second, &used, 0);
      if (used != it->second.size()) return std::nullopt;
      return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  std::optional<std::int64_t> primary() {
    skip();
    if (take("(")) {
      const auto v = binary(0);
      if (!take(")")) return std::nullopt;
      return v;
    }
    if (take("!")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(!*v) : std::nullopt;
    }
    if (take("~")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(~*v) : std::nullopt;
    }
    if (take("-")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(-*v) : std::nullopt;
    }
    if (take("+")) return primary();
    if (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      std::size_t end = at_;
      while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])))) ++end;
      std::string digits(text_.substr(at_, end - at_));
      while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
        digits.pop_back();
      at_ = end;
      try {
        std::size_t used = 0;
        const long long v = std::stoll(digits, &used, 0);
        if (used != digits.size()) return std::nullopt;
        return v;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    const auto n = name();
    if (!n) return std::nullopt;
    if (*n == "defined") {
      const bool paren = take("(");
      const auto m = name();
      if (!m || (paren && !take(")"))) return std::nullopt;
      if (!values_.count(*m)) return std::nullopt;  // another macro: not ours to decide
      return 1;
    }
    return value_of(*n);
  }

  // Precedence climbing over the binary operators, loosest first.
  std::optional<std::int64_t> binary(int level) {
    static const std::vector<std::vector<std::string_view>> levels = {
        {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(levels.size())) return primary();
    auto left = binary(level + 1);
    while (left) {
      skip();
      std::string_view op;
      for (std::string_view candidate : levels[static_cast<std::size_t>(level)]) {
        // `|` must not take the first half of `||`, nor `&` of `&&`, nor `<` of `<<`.
        if (text_.substr(at_, candidate.size()) != candidate) continue;
        const char next = at_ + candidate.size() < text_.size() ? text_[at_ + candidate.size()] : '\0';
        if (candidate.size() == 1 && (next == candidate[0] || (next == '=' && (candidate == "<" || candidate == ">"))))
          continue;
        op = candidate;
        break;
      }
      if (op.empty()) return left;
      at_ += op.size();
      const auto right = binary(level + 1);
      if (!right) return std::nullopt;
      const std::int64_t a = *left, b = *right;
      if (op == "||") left = (a || b);
      else if (op == "&&") left = (a && b);
      else if (op == "|") left = a | b;
      else if (op == "^") left = a ^ b;
      else if (op == "&") left = a & b;
      else if (op == "==") left = (a == b);
      else if (op == "!=") left = (a != b);
      else if (op == "<=") left = (a <= b);
      else if (op == ">=") left = (a >= b);
      else if (op == "<") left = (a < b);
      else if (op == ">") left = (a > b);
      else if (op == "<<") left = b < 0 || b > 62 ? std::optional<std::int64_t>() : std::optional<std::int64_t>(a << b);
      else if (op == ">>") left = b < 0 || b > 62 ? std::optional<std::int64_t>() : std::optional<std::int64_t>(a >> b);
      else if (op == "+") left = a + b;
      else if (op == "-") left = a - b;
      else if (op == "*") left = a * b;
      else if (b == 0) left = std::nullopt;
      else if (op == "/") left = a / b;
      else left = a % b;
    }
    return left;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  const std::map<std::string, std::string>& values_;
};

}  // namespace

std::optional<std::int64_t> evaluate_condition(std::string_view text,
                                               const std::map<std::string, std::string>& values) {
  return ConditionEvaluator(text, values).evaluate();
}

std::optional<Directive> directive_of(std::string_view line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] != '#') return std::nullopt;
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string_view::npos) return std::nullopt;
  std::size_t e = p;
  while (e < line.size() && std::isalpha(static_cast<unsigned char>(line[e]))) ++e;
  Directive d{std::string(line.substr(p, e - p)), std::string(line.substr(e))};
  // Comments end the condition (a /* */ comment is dropped in place).
  for (std::size_t c = d.rest.find('/'); c != std::string::npos; c = d.rest.find('/', c + 1)) {
    if (c + 1 < d.rest.size() && d.rest[c + 1] == '/') {
      d.rest.resize(c);
      break;
    }
    if (c + 1 < d.rest.size() && d.rest[c + 1] == '*') {
      const std::size_t close = d.rest.find("*/", c + 2);
      d.rest.erase(c, close == std::string::npos ? std::string::npos : close + 2 - c);
    }
  }
  return d;
}

}  // namespace gi::grammar

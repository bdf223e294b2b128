#pragma once
// Conditional directives as the preprocessor reads them: a line's directive
// keyword and condition, and the value of a condition over known macro
// values. What switch resolution (grammar/switches.hpp) and the tokenizer's
// inactive text (grammar/inactive_text.hpp) both decide from.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gi::grammar {

// A directive line: its keyword ("if", "elif", "define", ...) and the rest
// with comments removed.
struct Directive {
  std::string keyword;
  std::string rest;
};
// nullopt for a line that is no directive.
std::optional<Directive> directive_of(std::string_view line);

// The value of an #if condition: an integer constant expression of the
// preprocessor over `values` (literals, names, defined(NAME), unary ! ~ - +,
// binary * / % + - << >> < <= > >= == != & ^ | && ||, parentheses). nullopt
// when it reads a name `values` lacks (or whose value is no integer), or
// does not parse: not ours to decide. With no values, only a condition of
// literals alone (`0`, `1`) has a value.
std::optional<std::int64_t> evaluate_condition(std::string_view text,
                                               const std::map<std::string, std::string>& values);

}  // namespace gi::grammar

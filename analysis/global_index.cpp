#include "analysis/global_index.hpp"

#include <string>
#include <vector>

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

std::size_t next_code(const grammar::ParsedKernel& k, std::size_t t) {
  while (t < k.tokens.size() && k.tokens[t].kind == TokenKind::Comment) ++t;
  return t;
}

bool tokens_are(const grammar::ParsedKernel& k, std::size_t first, std::size_t last, const std::vector<std::string>& words) {
  std::size_t t = first;
  for (const std::string& w : words) {
    while (t <= last && k.tokens[t].kind == TokenKind::Comment) ++t;
    if (t > last || k.tokens[t].text != w) return false;
    ++t;
  }
  while (t <= last && k.tokens[t].kind == TokenKind::Comment) ++t;
  return t > last;
}

}  // namespace

bool is_global_index(const grammar::ParsedKernel& k, std::size_t first, std::size_t last) {
  static const std::vector<std::vector<std::string>> forms = {
      {"blockIdx", ".", "x", "*", "blockDim", ".", "x", "+", "threadIdx", ".", "x"},
      {"blockDim", ".", "x", "*", "blockIdx", ".", "x", "+", "threadIdx", ".", "x"},
      {"threadIdx", ".", "x", "+", "blockIdx", ".", "x", "*", "blockDim", ".", "x"},
      {"threadIdx", ".", "x", "+", "blockDim", ".", "x", "*", "blockIdx", ".", "x"}};
  for (const auto& f : forms)
    if (tokens_are(k, first, last, f)) return true;
  return is_flattened_global_index(k, first, last);
}

bool is_flattened_global_index(const grammar::ParsedKernel& k, std::size_t first, std::size_t last) {
  static const std::vector<std::vector<std::string>> forms = {
      {"(", "blockIdx", ".", "y", "*", "gridDim", ".", "x", "+", "blockIdx", ".", "x", ")", "*", "blockDim", ".", "x",
       "+", "threadIdx", ".", "x"},
      {"(", "gridDim", ".", "x", "*", "blockIdx", ".", "y", "+", "blockIdx", ".", "x", ")", "*", "blockDim", ".", "x",
       "+", "threadIdx", ".", "x"},
      {"threadIdx", ".", "x", "+", "(", "blockIdx", ".", "y", "*", "gridDim", ".", "x", "+", "blockIdx", ".", "x", ")",
       "*", "blockDim", ".", "x"}};
  for (const auto& f : forms)
    if (tokens_are(k, first, last, f)) return true;
  return false;
}

std::optional<GlobalIndexLine> global_index_line(const grammar::ParsedKernel& k, const grammar::Element& e,
                                                 bool declarations) {
  const bool declaration = e.kind == ElementKind::Declaration;
  if (e.kind != ElementKind::Statement && !(declarations && declaration)) return std::nullopt;
  // The '=' of depth 0; NAME is the identifier before it, and in a
  // declaration only type words come before NAME.
  std::size_t eq = e.tokens.first;
  while (eq < e.tokens.last && !k.tokens[eq].is("=")) {
    if (k.tokens[eq].is(",") || k.tokens[eq].is("(") || k.tokens[eq].is("[")) return std::nullopt;
    ++eq;
  }
  if (eq >= e.tokens.last || eq == e.tokens.first) return std::nullopt;
  std::size_t name = eq - 1;
  while (name > e.tokens.first && k.tokens[name].kind == TokenKind::Comment) --name;
  if (k.tokens[name].kind != TokenKind::Identifier) return std::nullopt;
  const std::size_t first_code = next_code(k, e.tokens.first);
  if (!declaration && first_code != name) return std::nullopt;
  if (declaration)
    for (std::size_t t = first_code; t < name; ++t)
      if (k.tokens[t].kind != TokenKind::Comment && k.tokens[t].kind != TokenKind::Identifier) return std::nullopt;
  std::size_t last = e.tokens.last;
  while (last > eq && (k.tokens[last].is(";") || k.tokens[last].kind == TokenKind::Comment)) --last;
  if (last <= eq || !is_global_index(k, eq + 1, last)) return std::nullopt;
  return GlobalIndexLine{name, eq, next_code(k, eq + 1), last, declaration, is_flattened_global_index(k, eq + 1, last)};
}

}  // namespace gi::analysis

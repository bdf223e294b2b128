#pragma once
// Token ranges of a kernel's statements: the next and previous code token,
// the end of an expression, the bracket that closes one, a range split at its top-level separators. Shared by the
// loop analyses (analysis/warp_per_item_sites.cpp, analysis/loop_nest.cpp),
// uniformity and parameter use.
#include <cstddef>
#include <utility>
#include <vector>

#include "grammar/token.hpp"

namespace gi::analysis {

inline std::size_t next_code(const std::vector<grammar::Token>& t, std::size_t i) {
  while (i < t.size() && t[i].kind == grammar::TokenKind::Comment) ++i;
  return i;
}

// The code token before `i`, not below `floor`; `floor` when there is none.
inline std::size_t prev_code(const std::vector<grammar::Token>& t, std::size_t i, std::size_t floor = 0) {
  while (i > floor) {
    --i;
    if (t[i].kind != grammar::TokenKind::Comment) return i;
  }
  return floor;
}

// The last code token of the expression that starts at `from`, not past
// `last`: before a `;` or `,` outside brackets, or before the bracket that
// closes around it (an initialiser's, a call's argument).
inline std::size_t expression_end(const std::vector<grammar::Token>& t, std::size_t from, std::size_t last) {
  std::size_t end = from;
  int depth = 0;
  for (std::size_t v = from; v <= last && v < t.size(); v = next_code(t, v + 1)) {
    if (t[v].is("(") || t[v].is("[") || t[v].is("{")) ++depth;
    if (t[v].is(")") || t[v].is("]") || t[v].is("}")) --depth;
    if (depth < 0 || (depth == 0 && (t[v].is(";") || t[v].is(",")))) break;
    end = v;
  }
  return end;
}

// The token closing the bracket at `open`.
inline std::size_t closing(const std::vector<grammar::Token>& t, std::size_t open) { return grammar::closing_bracket(t, open); }

// [first, last] split at depth-0 `sep` tokens (a part may be empty: first > last).
inline std::vector<std::pair<std::size_t, std::size_t>> split(const std::vector<grammar::Token>& t, std::size_t first, std::size_t last,
                                                       const char* sep) {
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  int depth = 0;
  std::size_t start = first;
  for (std::size_t i = first; i <= last && i < t.size(); ++i) {
    if (t[i].is("(") || t[i].is("[") || t[i].is("{")) ++depth;
    if (t[i].is(")") || t[i].is("]") || t[i].is("}")) --depth;
    if (depth == 0 && t[i].is(sep)) {
      parts.emplace_back(start, i - 1);
      start = i + 1;
    }
  }
  parts.emplace_back(start, last);
  return parts;
}

}  // namespace gi::analysis

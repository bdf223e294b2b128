#include "grammar/constant_variables.hpp"

namespace gi::grammar {

std::vector<ConstantVariable> constant_variables(const ParsedKernel& k) {
  std::vector<ConstantVariable> out;
  for (std::size_t t = 0; t < k.tokens.size(); ++t) {
    if (!k.tokens[t].is("__constant__")) continue;
    // The declaration runs to its first `;`, `=`, `[`, `,`, `(` or `{`; NAME
    // is the last identifier before that, TYPE the identifiers between.
    std::vector<std::size_t> words;
    std::size_t u = t + 1;
    for (; u < k.tokens.size(); ++u) {
      const Token& v = k.tokens[u];
      if (v.is(";") || v.is("=") || v.is("[") || v.is(",") || v.is("(") || v.is("{")) break;
      if (v.kind == TokenKind::Identifier) words.push_back(u);
    }
    if (words.empty()) continue;
    ConstantVariable c;
    c.name = k.tokens[words.back()].text;
    c.line = k.tokens[words.back()].line;
    c.array = u < k.tokens.size() && k.tokens[u].is("[");
    // Each `[...]` after the name, as written.
    for (std::size_t b = u; b < k.tokens.size() && k.tokens[b].is("[");) {
      std::string dim;
      std::size_t e = b + 1;
      for (; e < k.tokens.size() && !k.tokens[e].is("]"); ++e)
        if (k.tokens[e].kind != TokenKind::Comment) dim += (dim.empty() ? "" : " ") + k.tokens[e].text;
      c.length += (c.length.empty() ? "" : " * ") + (dim.find(' ') == std::string::npos ? dim : "(" + dim + ")");
      b = e + 1;
    }
    for (std::size_t w = 0; w + 1 < words.size(); ++w) {
      const std::string& word = k.tokens[words[w]].text;
      if (word == "const" || word == "__device__" || word == "static" || word == "volatile" || word == "extern")
        continue;
      c.type += (c.type.empty() ? "" : " ") + word;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gi::grammar

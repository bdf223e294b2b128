// entry_qualified_from_file_scope (grammar/entry_namespace.hpp).
#include "grammar/entry_namespace.hpp"

#include <vector>

#include "grammar/template_instance.hpp"
#include "grammar/token.hpp"

namespace gi::grammar {

std::string entry_qualified_from_file_scope(std::string_view source, const std::string& entry) {
  const std::string name = entry_function_name(entry);
  if (name.empty() || entry.find("::") != std::string::npos) return entry;
  std::vector<Token> tokens;
  for (Token& t : tokenize(source, "kernel.cu"))
    if (t.kind != TokenKind::Comment && t.kind != TokenKind::Preprocessor) tokens.push_back(std::move(t));
  // The namespaces open at each brace depth: "" for an unnamed one, -1 depth none.
  struct Open {
    int depth;
    std::string name;
  };
  std::vector<Open> open;
  int depth = 0;
  bool global = false;  // a __global__ seen since the last ';', '{' or '}'
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const Token& tok = tokens[t];
    if (tok.is("namespace")) {
      std::string named;
      std::size_t j = t + 1;
      for (; j < tokens.size() && (tokens[j].kind == TokenKind::Identifier || tokens[j].is("::")); ++j)
        named += tokens[j].text;
      if (j < tokens.size() && tokens[j].is("{")) {
        open.push_back({++depth, named});
        t = j;
        global = false;
        continue;
      }
    }
    if (tok.is("{")) ++depth;
    if (tok.is("}")) {
      if (!open.empty() && open.back().depth == depth) open.pop_back();
      --depth;
    }
    if (tok.is(";") || tok.is("{") || tok.is("}")) global = false;
    if (tok.is("__global__")) global = true;
    if (global && tok.is(name) && t + 1 < tokens.size() && (tokens[t + 1].is("(") || tokens[t + 1].is("<"))) {
      std::string prefix;
      for (const Open& o : open)
        if (!o.name.empty()) prefix += o.name + "::";
      return prefix + entry;
    }
  }
  return entry;
}

}  // namespace gi::grammar

#include "gi/seed/mode_scalars.hpp"

#include <optional>

#include "analysis/expression.hpp"

namespace gi {

namespace {

using grammar::Token;
using grammar::TokenKind;

// A whole number as written (`3`, `2u`, `0x10`), negated after a minus:
// the analysis's reading of a literal.
std::optional<long long> whole_number(const Token& t, bool negative) {
  if (t.kind != TokenKind::Number) return std::nullopt;
  analysis::Expr literal;
  literal.text = t.text;
  const auto v = analysis::whole_literal(literal);
  return v && negative ? std::optional<long long>(-*v) : v;
}

}  // namespace

std::map<std::string, std::set<long long>> mode_values(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                                                      const std::set<std::string>& candidates) {
  int index = -1;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (&k.functions[f] == &kernel) index = static_cast<int>(f);
  std::map<std::string, std::set<long long>> out;
  std::set<std::string> assigned;  // a parameter the body changes picks no mode
  // One the body computes with or orders (`(ei + 1) % d_Nr == 0`, `i < n`) is
  // a quantity, not a mode.
  std::set<std::string> quantity;
  static const std::set<std::string> arithmetic = {"+", "-", "*", "/", "%", "<<", ">>", "<", ">", "<=", ">=",
                                                   "&", "|", "^"};
  const auto& tk = k.tokens;
  const auto code = [&](std::size_t t) { return t < tk.size() && tk[t].kind != TokenKind::Comment; };
  for (const grammar::Element& e : k.elements) {
    if (e.function != index || index < 0) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < tk.size(); ++t) {
      if (!code(t)) continue;
      if (tk[t].kind != TokenKind::Identifier || !candidates.count(tk[t].text)) continue;
      const std::string& name = tk[t].text;
      if (t > e.tokens.first && (tk[t - 1].is(".") || tk[t - 1].is("->"))) continue;
      if ((t > e.tokens.first && arithmetic.count(tk[t - 1].text)) ||
          (t + 1 <= e.tokens.last && arithmetic.count(tk[t + 1].text)))
        quantity.insert(name);
      if (t + 1 <= e.tokens.last) {
        const std::string& op = tk[t + 1].text;
        if (op == "=" || op == "+=" || op == "-=" || op == "++" || op == "--" || op == "*=" || op == "/=")
          assigned.insert(name);
        // `name == 3`, `name != -1`
        if ((op == "==" || op == "!=") && t + 2 <= e.tokens.last) {
          const bool minus = tk[t + 2].is("-");
          if (const auto v = whole_number(tk[t + 2 + (minus ? 1 : 0)], minus)) out[name].insert(*v);
        }
      }
      // `3 == name`
      if (t >= e.tokens.first + 2 && (tk[t - 1].is("==") || tk[t - 1].is("!=")))
        if (const auto v = whole_number(tk[t - 2], false)) out[name].insert(*v);
    }
  }
  // `case N:` under `switch (name)` (the last switch before it: a nested
  // switch's labels after its end count for it, which only adds a check).
  std::string switched;
  for (const grammar::Element& e : k.elements) {
    if (e.function != index || index < 0) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < tk.size(); ++t) {
      if (tk[t].is("switch") && t + 3 < tk.size() && tk[t + 1].is("(") && tk[t + 3].is(")"))
        switched = candidates.count(tk[t + 2].text) ? tk[t + 2].text : "";
      if (tk[t].is("case") && !switched.empty() && t + 1 < tk.size()) {
        const bool minus = tk[t + 1].is("-");
        if (t + 1 + (minus ? 1 : 0) < tk.size())
          if (const auto v = whole_number(tk[t + 1 + (minus ? 1 : 0)], minus)) out[switched].insert(*v);
      }
    }
  }
  for (const std::string& a : assigned) out.erase(a);
  for (const std::string& q : quantity) out.erase(q);
  return out;
}

}  // namespace gi

#include "grammar/call_graph.hpp"

#include <map>

#include "grammar/template_instance.hpp"

namespace gi::grammar {

namespace {

std::size_t code_after(const ParsedKernel& k, std::size_t t) {
  ++t;
  while (t < k.tokens.size() && k.tokens[t].kind == TokenKind::Comment) ++t;
  return t;
}

// The arguments of the call whose name is token `t` (`f(a, g(b, c))`: 2);
// -1 where no `(` follows the name.
int arguments_of_call(const ParsedKernel& k, std::size_t t) {
  const std::size_t open = code_after(k, t);
  if (open >= k.tokens.size() || !k.tokens[open].is("(")) return -1;
  const std::size_t close = closing_bracket(k.tokens, open);
  if (close >= k.tokens.size()) return -1;
  if (code_after(k, open) == close) return 0;
  int depth = 0, arguments = 1;
  for (std::size_t u = open + 1; u < close; ++u) {
    const Token& x = k.tokens[u];
    if (x.is("(") || x.is("[") || x.is("{")) ++depth;
    else if (x.is(")") || x.is("]") || x.is("}")) --depth;
    else if (depth == 0 && x.is(",")) ++arguments;
  }
  return arguments;
}

// Whether `f` can be called with `n` arguments: at most its parameters, at
// least those without a default (`= v`); any number past a `...`.
bool takes(const ParsedKernel& k, const Function& f, int n) {
  int required = 0;
  for (const Param& p : f.params) {
    bool has_default = false;
    for (std::size_t t = p.tokens.first; t <= p.tokens.last && t < k.tokens.size(); ++t)
      has_default = has_default || k.tokens[t].is("=");
    if (!has_default) ++required;
  }
  if (f.header_element >= 0) {
    const Element& h = k.elements[static_cast<std::size_t>(f.header_element)];
    for (std::size_t t = h.tokens.first; t <= h.tokens.last && t < k.tokens.size(); ++t)
      if (k.tokens[t].is("...")) return n >= required;
  }
  return n >= required && n <= static_cast<int>(f.params.size());
}

}  // namespace

std::vector<bool> functions_reachable_from(const ParsedKernel& k, const std::string& entry, bool every_overload) {
  const std::size_t n = k.functions.size();
  std::vector<bool> in(n, false);
  std::vector<std::size_t> todo;
  for (std::size_t f = 0; f < n; ++f)
    if (k.functions[f].name == entry_function_name(entry) && k.functions[f].is_kernel) in[f] = true, todo.push_back(f);
  if (todo.empty()) return std::vector<bool>(n, true);
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t f = 0; f < n; ++f) by_name[k.functions[f].name].push_back(f);
  while (!todo.empty()) {
    const int f = static_cast<int>(todo.back());
    todo.pop_back();
    for (const Element& e : k.elements) {
      if (e.function != f) continue;
      for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) {
        const auto it = by_name.find(k.tokens[t].text);
        if (it == by_name.end()) continue;
        // The overloads that take the call's arguments; all where none does.
        const int arguments = every_overload ? -1 : arguments_of_call(k, t);
        std::vector<std::size_t> fitting;
        for (std::size_t g : it->second)
          if (arguments >= 0 && takes(k, k.functions[g], arguments)) fitting.push_back(g);
        for (std::size_t g : fitting.empty() ? it->second : fitting)
          if (!in[g]) in[g] = true, todo.push_back(g);
      }
    }
  }
  return in;
}

std::set<std::string> names_used_by(const ParsedKernel& k, const std::vector<bool>& reached) {
  std::set<std::string> used;
  for (const Element& e : k.elements)
    if (e.function >= 0 && reached[static_cast<std::size_t>(e.function)])
      for (std::size_t i = e.tokens.first; i <= e.tokens.last; ++i)
        if (k.tokens[i].kind == TokenKind::Identifier) used.insert(k.tokens[i].text);
  return used;
}

}  // namespace gi::grammar

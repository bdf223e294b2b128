#include "grammar/call_graph.hpp"

#include <map>

#include "grammar/template_instance.hpp"

namespace gi::grammar {

std::vector<bool> functions_reachable_from(const ParsedKernel& k, const std::string& entry) {
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
        for (std::size_t g : it->second)
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

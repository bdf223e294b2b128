#include "analysis/unset_components.hpp"

#include <algorithm>
#include <set>

#include "analysis/token_ranges.hpp"
#include "grammar/type_aliases.hpp"

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

}  // namespace

std::map<std::string, UnsetComponents> unset_components(const grammar::ParsedKernel& k,
                                                        const grammar::Function& kernel) {
  const int fn = static_cast<int>(&kernel - k.functions.data());
  const auto& t = k.tokens;
  std::set<std::string> pointers;
  for (const grammar::Param& p : kernel.params)
    if (p.pointer) pointers.insert(p.name);
  std::size_t first = t.size(), last = 0;
  std::vector<const grammar::Element*> declarations;
  for (const grammar::Element& e : k.elements) {
    if (e.function != fn || e.kind == ElementKind::FunctionHeader) continue;
    first = std::min(first, e.tokens.first);
    last = std::max(last, e.tokens.last);
    if (e.kind == ElementKind::Declaration) declarations.push_back(&e);
  }
  const auto next = [&](std::size_t i) { return next_code(t, i + 1); };
  const auto prev = [&](std::size_t i) { return prev_code(t, i, first); };
  std::map<std::string, UnsetComponents> out;
  for (const grammar::Element* d : declarations) {
    // `float4 name;`, nothing else (`const` would need a value).
    const std::size_t type = next_code(t, d->tokens.first), name = next(type), end = next(name);
    const int components = grammar::cuda_vector_components(t[type].text);
    if (components < 2 || t[name].kind != TokenKind::Identifier || !t[end].is(";") || end != d->tokens.last) continue;
    const std::string& local = t[name].text;
    std::set<int> set;
    std::vector<std::pair<std::string, int>> stores;  // buffer, line
    bool whole = false;
    for (std::size_t i = first; i <= last && !whole; ++i) {
      if (i == name || t[i].kind != TokenKind::Identifier || t[i].text != local) continue;
      const std::size_t p = prev(i), n = next(i);
      if (t[p].is(".") || t[p].is("->")) continue;  // someone else's member
      if (t[n].is(".")) {
        const std::size_t field = next(n), op = next(field);
        const std::string fields = "xyzw";
        const std::size_t c = t[field].text.size() == 1 ? fields.find(t[field].text[0]) : std::string::npos;
        if (c != std::string::npos && (t[op].is("=") || t[op].is("+=") || t[op].is("-=") || t[op].is("*=") ||
                                       t[op].is("/=")))
          set.insert(static_cast<int>(c));
        continue;
      }
      // `buffer[...] = local;`: a whole store.
      if (t[p].is("=") && t[n].is(";") && t[prev(p)].is("]")) {
        int depth = 0;
        std::size_t open = prev(p);
        for (; open > first; open = prev(open)) {
          if (t[open].is("]")) ++depth;
          if (t[open].is("[") && --depth == 0) break;
        }
        if (open > first && pointers.count(t[prev(open)].text)) {
          stores.emplace_back(t[prev(open)].text, t[i].line);
          continue;
        }
      }
      // Assigned whole, its address taken, handed to a function or read
      // whole anywhere else: gi cannot say what it holds.
      whole = true;
    }
    if (whole || stores.empty() || static_cast<int>(set.size()) == components) continue;
    std::string fields;
    for (int c : set) fields += std::string(fields.empty() ? "" : " ") + "." + "xyzw"[c];
    for (const auto& [buffer, line] : stores) {
      UnsetComponents u;
      u.set.assign(set.begin(), set.end());
      u.evidence = "line " + std::to_string(t[name].line) + ": '" + local + "' is a " + t[type].text +
                   " declared without a value; the kernel sets " + (fields.empty() ? "none of it" : fields) +
                   " and line " + std::to_string(line) + " stores it whole into '" + buffer + "'";
      const auto it = out.find(buffer);
      if (it == out.end()) {
        out.emplace(buffer, u);
        continue;
      }
      std::vector<int> both;
      std::set_intersection(it->second.set.begin(), it->second.set.end(), u.set.begin(), u.set.end(),
                            std::back_inserter(both));
      it->second.set = both;
      it->second.evidence += "; " + u.evidence;
    }
  }
  return out;
}

}  // namespace gi::analysis

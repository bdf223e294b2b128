#include "gi/seed/kernel_cut.hpp"

#include <set>

#include "grammar/call_graph.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

std::string lines_of(const grammar::Token& a, const grammar::Token& b) {
  return a.line == b.end_line ? "line " + std::to_string(a.line)
                              : "lines " + std::to_string(a.line) + "-" + std::to_string(b.end_line);
}

// The token closing the bracket at `open` ({, ( or <), or `open` when none does.
std::size_t closing_of(const std::vector<grammar::Token>& t, std::size_t open) {
  const std::string o = t[open].text, c = o == "{" ? "}" : o == "(" ? ")" : ">";
  int depth = 0;
  for (std::size_t i = open; i < t.size(); ++i) {
    if (t[i].kind == TokenKind::Comment) continue;
    if (t[i].text == o) ++depth;
    if (t[i].text == c && --depth == 0) return i;
  }
  return open;
}

}  // namespace

KernelCut cut_kernel(std::string_view source, const std::string& file_name, const std::string& entry, bool drop_includes) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, file_name);
  const auto& t = k.tokens;
  const std::vector<bool> kept = grammar::functions_reachable_from(k, entry);
  KernelCut cut{std::string(source), {}};
  const auto blank = [&](std::size_t first, std::size_t last, const std::string& what) {
    for (std::size_t c = t[first].offset; c < t[last].offset + t[last].text.size(); ++c)
      if (cut.source[c] != '\n') cut.source[c] = ' ';
    cut.dropped.push_back(what + " (" + lines_of(t[first], t[last]) + ")");
  };
  // Names the kept functions use: the file-level declarations they need.
  const std::set<std::string> used = grammar::names_used_by(k, kept);
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    const grammar::Function& fn = k.functions[f];
    if (kept[f] || fn.header_element < 0) continue;
    const grammar::Element& header = k.elements[static_cast<std::size_t>(fn.header_element)];
    std::size_t first = header.tokens.first;
    // A template's `template <...>` clause goes with it.
    std::size_t before = first;
    while (before > 0 && t[before - 1].kind == TokenKind::Comment) --before;
    if (before > 0 && t[before - 1].text == ">") {
      for (std::size_t i = before - 1; i-- > 0;)
        if (t[i].text == "template" && i + 1 < t.size() && t[i + 1].text == "<" && closing_of(t, i + 1) == before - 1) {
          first = i;
          break;
        }
    }
    if (!t[header.tokens.last].is("{")) continue;  // a prototype: harmless
    blank(first, closing_of(t, header.tokens.last), std::string(fn.is_kernel ? "kernel" : "function") + " '" + fn.name + "'");
  }
  for (const grammar::Element& e : k.elements) {
    if (e.function >= 0) continue;
    if (e.kind == ElementKind::Declaration && !e.declares.empty()) {
      bool needed = false;
      for (const std::string& n : e.declares) needed = needed || used.count(n);
      if (!needed) blank(e.tokens.first, e.tokens.last, "declaration of '" + e.declares[0] + "'");
    } else if (e.kind == ElementKind::TopLevel && !e.host_code && t[e.tokens.last].is(";") &&
               !(t[e.tokens.first].is("using") && t[e.tokens.first + 1].is("namespace"))) {  // names no declaration
      // A declaration of a type the parser does not know (`texture<float, 1, ...> t_x;`): the
      // name before the `;`, unless the item has braces or parentheses (a prototype, a struct).
      bool plain = true;
      std::size_t name = e.tokens.first;
      int depth = 0;  // inside [] or <>: an extent or template argument, not the name
      for (std::size_t i = e.tokens.first; i < e.tokens.last; ++i) {
        if (t[i].is("{") || t[i].is("}") || t[i].is("(")) plain = false;
        if (t[i].is("[") || t[i].is("<")) ++depth;
        if (t[i].is("]") || t[i].is(">")) --depth;
        if (depth == 0 && t[i].kind == TokenKind::Identifier) name = i;
      }
      if (plain && t[name].kind == TokenKind::Identifier && !used.count(t[name].text))
        blank(e.tokens.first, e.tokens.last, "declaration of '" + t[name].text + "'");
    } else if (drop_includes && e.kind == ElementKind::Preprocessor && t[e.tokens.first].text.rfind("#include", 0) == 0) {
      std::string line = t[e.tokens.first].text;
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
      blank(e.tokens.first, e.tokens.last, line);
    }
  }
  return cut;
}

}  // namespace gi

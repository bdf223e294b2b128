#include "analysis/register_arrays.hpp"

#include <map>

#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::Token;
using grammar::TokenKind;

constexpr int kMaxElements = 16;  // a longer chain of selects costs more than the local memory it saves

enum class Access {
  None,           // not an element access of NAME
  LiteralIndex,   // NAME[3]: the compiler knows the element
  ComputedRead,   // NAME[a + 1] as a value: the rewrite's case
  ComputedWrite,  // NAME[i] = v, NAME[i]++, &NAME[i]: keeps the array in local memory
  Untouched,      // a computed read the rewrite leaves (impure index, member, element of an element)
};

bool is_assignment(const Token& t) {
  for (const char* op : {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"})
    if (t.is(op)) return true;
  return false;
}

// Whether the `&` at `at` takes an address (unary) rather than a bitwise and:
// what comes before it is no operand.
bool unary_ampersand(const std::vector<Token>& t, std::size_t at) {
  if (at == 0) return true;
  const Token& before = t[at - 1];
  if (before.kind == TokenKind::Identifier || before.kind == TokenKind::Number) return false;
  return !(before.is(")") || before.is("]"));
}

// Whether tokens [first, last] are an index the rewrite may evaluate N times:
// no assignment, increment or call (a cast `(int)x` is fine: its `(` follows
// no name).
bool pure_index(const std::vector<Token>& t, std::size_t first, std::size_t last) {
  for (std::size_t i = first; i <= last; ++i) {
    if (t[i].kind == TokenKind::Comment) continue;
    if (t[i].kind == TokenKind::String || t[i].kind == TokenKind::Char || t[i].kind == TokenKind::Preprocessor) return false;
    if (is_assignment(t[i]) || t[i].is("{") || t[i].is(",")) return false;
    if (t[i].is("(") && i > first && t[i - 1].kind == TokenKind::Identifier) return false;  // a call
  }
  return true;
}

bool one_number(const std::vector<Token>& t, std::size_t first, std::size_t last) {
  first = next_code(t, first);
  return first == last && t[first].kind == TokenKind::Number;
}

// What the token at `at` (an identifier) starts; `close` gets the `]`.
Access access_at(const std::vector<Token>& t, std::size_t at, const std::string& name, std::size_t& close) {
  if (t[at].kind != TokenKind::Identifier || t[at].text != name) return Access::None;
  if (at > 0 && (t[at - 1].is(".") || t[at - 1].is("->") || t[at - 1].is("::"))) return Access::None;
  const std::size_t open = next_code(t, at + 1);
  if (open >= t.size() || !t[open].is("[")) return Access::None;
  close = closing(t, open);
  if (close >= t.size() || close == open + 1) return Access::Untouched;
  if (one_number(t, open + 1, close - 1)) return Access::LiteralIndex;
  const std::size_t after = next_code(t, close + 1);
  const bool written_after = after < t.size() && is_assignment(t[after]) && !t[after].is("==");
  const bool written_before = at > 0 && (t[at - 1].is("++") || t[at - 1].is("--") ||
                                         (t[at - 1].is("&") && unary_ampersand(t, at - 1)));
  if (written_after || written_before) return Access::ComputedWrite;
  if (after < t.size() && (t[after].is(".") || t[after].is("->") || t[after].is("["))) return Access::Untouched;
  for (std::size_t i = open + 1; i < close; ++i)
    if (t[i].kind == TokenKind::Identifier && t[i].text == name) return Access::Untouched;  // NAME[NAME[i]]
  return pure_index(t, open + 1, close - 1) ? Access::ComputedRead : Access::Untouched;
}

// The size of `NAME[N]` declared by element `e` (0 when it is no such array)
// and the qualifiers that rule it out.
int declared_size(const grammar::ParsedKernel& k, const grammar::Element& e, const std::string& name, std::string& qualifier) {
  const auto& t = k.tokens;
  for (std::size_t i = e.tokens.first; i <= e.tokens.last; ++i) {
    for (const char* q : {"__shared__", "static", "extern", "volatile", "__constant__"})
      if (t[i].is(q)) qualifier = q;
    if (t[i].kind != TokenKind::Identifier || t[i].text != name) continue;
    const std::size_t open = next_code(t, i + 1);
    if (open > e.tokens.last || !t[open].is("[")) return 0;
    const std::size_t close = closing(t, open);
    if (close > e.tokens.last || !one_number(t, open + 1, close - 1)) return 0;
    const std::size_t after = next_code(t, close + 1);
    if (after <= e.tokens.last && t[after].is("[")) return 0;  // two dimensions
    try {
      return std::stoi(t[next_code(t, open + 1)].text, nullptr, 0);
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

RegisterArrays find_register_arrays(const grammar::ParsedKernel& k, const std::function<bool(std::size_t)>& live) {
  RegisterArrays out;
  const auto& t = k.tokens;
  // How often each function declares each name: the rewrite covers a whole function.
  std::map<std::pair<int, std::string>, int> declared;
  for (const auto& e : k.elements)
    if (e.function >= 0 && (e.kind == grammar::ElementKind::Declaration || e.kind == grammar::ElementKind::LoopHeader))
      for (const std::string& name : e.declares) ++declared[{e.function, name}];
  for (const auto& f : k.functions)
    for (const auto& p : f.params) ++declared[{static_cast<int>(&f - k.functions.data()), p.name}];

  for (std::size_t d = 0; d < k.elements.size(); ++d) {
    const grammar::Element& e = k.elements[d];
    if (e.kind != grammar::ElementKind::Declaration || e.function < 0) continue;
    if (live && !live(e.tokens.first)) continue;
    for (const std::string& name : e.declares) {
      std::string qualifier;
      const int size = declared_size(k, e, name, qualifier);
      // No one-dimensional array of a literal size, or one that is no thread's own (shared,
      // static, ...): neither a site nor a refusal, since nobody would expect one there.
      if (size == 0 || !qualifier.empty()) continue;
      const std::string line = "line " + std::to_string(t[e.tokens.first].line) + ": ";
      const grammar::Function& fn = k.functions[static_cast<std::size_t>(e.function)];
      const std::size_t open = k.elements[static_cast<std::size_t>(fn.header_element)].tokens.last;
      const std::size_t end = closing(t, open);
      RegisterArray site{e.function, d, name, size, 0};
      std::string refusal;
      for (std::size_t i = open; i < end; ++i) {
        if (live && !live(i)) continue;
        std::size_t close = 0;
        const Access a = access_at(t, i, name, close);
        if (a == Access::ComputedRead) ++site.computed_reads;
        if (a == Access::ComputedWrite && refusal.empty())
          refusal = line + name + " is written at a computed index (line " + std::to_string(t[i].line) +
                    "): unless the compiler resolves that index (a loop it unrolls), the array stays in local "
                    "memory whatever its reads become";
      }
      if (site.computed_reads == 0) continue;  // every read has a literal index: registers already
      // The first reason that applies: a computed write, its size, a second declaration.
      if (refusal.empty() && (size < 2 || size > kMaxElements))
        refusal = line + name + " has " + std::to_string(size) + " elements: a chain of selects pays for 2 to " +
                  std::to_string(kMaxElements);
      if (refusal.empty() && declared[{e.function, name}] > 1)
        refusal = line + name + " is declared more than once in " + fn.name + ": the rewrite covers the whole function";
      if (refusal.empty()) out.sites.push_back(site);
      else out.refusals.push_back(refusal);
    }
  }
  return out;
}

std::string read_through_selects(const std::string& text, const std::string& name, int size, int* count) {
  if (count) *count = 0;
  if (text.find(name) == std::string::npos) return text;
  std::vector<Token> t;
  try {
    t = grammar::tokenize(text, "line");
  } catch (...) {
    return text;  // not whole tokens (cannot happen for a rule's text): left as it is
  }
  std::string out;
  std::size_t copied = 0;  // offset in text up to which out holds it
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::size_t close = 0;
    if (access_at(t, i, name, close) != Access::ComputedRead) continue;
    const std::size_t open = next_code(t, i + 1);
    const std::size_t index_from = t[open].offset + 1, index_to = t[close].offset;
    std::string index = text.substr(index_from, index_to - index_from);
    index.erase(0, index.find_first_not_of(" \t\n"));
    index.erase(index.find_last_not_of(" \t\n") + 1);
    const bool plain = close == open + 2 && t[open + 1].kind == TokenKind::Identifier;
    const std::string e = plain ? index : "(" + index + ")";
    std::string chain = name + "[" + std::to_string(size - 1) + "]";
    for (int v = size - 2; v >= 0; --v)
      chain = "(" + e + " == " + std::to_string(v) + " ? " + name + "[" + std::to_string(v) + "] : " + chain + ")";
    out += text.substr(copied, t[i].offset - copied) + chain;
    copied = t[close].offset + 1;
    if (count) ++*count;
    i = close;
  }
  return out + text.substr(copied);
}

}  // namespace gi::analysis

#include "grammar/local_assignments.hpp"

#include <algorithm>

namespace gi::grammar {
namespace {

bool is_assignment_operator(const Token& t) {
  static const char* const kOps[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  return t.kind == TokenKind::Punct && std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return t.text == op; });
}

// The token after the expression that starts with identifier `t`: past any
// `.member` and `[...]` so that `a.x = ` and `a[i] = ` count as writes to a.
std::size_t after_lvalue(const ParsedKernel& k, std::size_t t, std::size_t last) {
  std::size_t i = t + 1;
  while (i <= last) {
    if ((k.tokens[i].is(".") || k.tokens[i].is("->")) && i + 1 <= last) {
      i += 2;
    } else if (k.tokens[i].is("[")) {
      int depth = 0;
      for (; i <= last; ++i) {
        if (k.tokens[i].is("[")) ++depth;
        if (k.tokens[i].is("]") && --depth == 0) break;
      }
      ++i;
    } else {
      break;
    }
  }
  return i;
}

// Whether identifier token t in [first, last] is given a value there.
bool assigns(const ParsedKernel& k, std::size_t t, std::size_t first, std::size_t last) {
  const std::size_t next = after_lvalue(k, t, last);
  if (next <= last && (is_assignment_operator(k.tokens[next]) || k.tokens[next].is("++") || k.tokens[next].is("--")))
    return true;
  if (t > first) {
    const Token& p = k.tokens[t - 1];
    if (p.is("++") || p.is("--")) return true;
    // &name as an argument: an out-parameter (a call may write it).
    if (p.is("&") && t - 1 > first && (k.tokens[t - 2].is("(") || k.tokens[t - 2].is(","))) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> names_read(const ParsedKernel& k, TokenRange range) {
  std::vector<std::string> out;
  for (std::size_t t = range.first; t <= range.last; ++t) {
    if (!names_something(k, t, range.first)) continue;
    const Token& x = k.tokens[t];
    const std::size_t next = t + 1;
    if (next <= range.last && k.tokens[next].kind == TokenKind::Punct && k.tokens[next].text == "=") continue;
    if (std::find(out.begin(), out.end(), x.text) == out.end()) out.push_back(x.text);
  }
  return out;
}

namespace {

// Whether `inner` is `outer` or nested in it.
bool within(const ParsedKernel& k, int inner, int outer) {
  for (int b = inner; b >= 0; b = k.blocks[static_cast<std::size_t>(b)].parent)
    if (b == outer) return true;
  return false;
}

}  // namespace

bool LocalAssignments::assigned_before(const ParsedKernel& k, int d, int block, int pos) const {
  const auto i = static_cast<std::size_t>(d);
  if (!needs_value.at(i)) return true;
  for (const Assignment& a : assignments[i]) {
    if (a.pos >= pos) break;
    // Every switch path holding the assignment must hold the place too.
    bool reaches = true;
    for (int b = a.block; b >= 0 && reaches; b = k.blocks[static_cast<std::size_t>(b)].parent)
      if (k.blocks[static_cast<std::size_t>(b)].branch && !within(k, block, b)) reaches = false;
    if (reaches) return true;
  }
  return false;
}

LocalAssignments local_assignments(const ParsedKernel& k) {
  LocalAssignments a;
  a.needs_value.assign(k.declarations.size(), false);
  a.assignments.resize(k.declarations.size());
  for (std::size_t d = 0; d < k.declarations.size(); ++d) {
    const Declaration& decl = k.declarations[d];
    if (decl.block == 0 || decl.pos < 0 || static_cast<std::size_t>(decl.pos) >= k.elements.size()) continue;
    const Element& e = k.elements[static_cast<std::size_t>(decl.pos)];
    if (e.kind != ElementKind::Declaration || !e.scalar_type) continue;
    bool initialised = false;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) initialised |= is_assignment_operator(k.tokens[t]);
    a.needs_value[d] = !initialised;
  }
  for (const Element& e : k.elements) {
    if (e.function < 0 || e.kind == ElementKind::Comment) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) {
      if (!names_something(k, t, e.tokens.first)) continue;
      const Token& x = k.tokens[t];
      if (!assigns(k, t, e.tokens.first, e.tokens.last)) continue;
      const int d = resolve(k, x.text, e.block, e.pos);
      if (d < 0 || !a.needs_value[static_cast<std::size_t>(d)]) continue;
      auto& list = a.assignments[static_cast<std::size_t>(d)];
      if (list.empty() || list.back().pos != e.pos) list.push_back({e.pos, e.block});
    }
  }
  return a;
}

}  // namespace gi::grammar

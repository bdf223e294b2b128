#include "grammar/edits/vector_loads.hpp"

#include <cctype>
#include <set>

#include "analysis/token_ranges.hpp"
#include "grammar/type_aliases.hpp"

namespace gi::grammar {
namespace {

int kernel_of(const Grammar& g, const WorkItemRegion& site) { return g.context(site.first_rule).function; }

// Whether the identifier at token t is read as exactly `NAME[tid]`, not
// written there, nor its address taken.
bool read_at_tid(const ParsedKernel& k, std::size_t t, const std::string& tid) {
  using analysis::next_code;
  const std::size_t open = next_code(k.tokens, t + 1), index = next_code(k.tokens, open + 1),
                    close = next_code(k.tokens, index + 1);
  if (close >= k.tokens.size() || !k.tokens[open].is("[") || !k.tokens[index].is(tid) || !k.tokens[close].is("]"))
    return false;
  if (t > 0 && (k.tokens[t - 1].is("&") || k.tokens[t - 1].is("++") || k.tokens[t - 1].is("--"))) return false;
  const std::size_t after = next_code(k.tokens, close + 1);
  if (after < k.tokens.size())
    for (const char* op : {"=", "++", "--", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "."})
      if (k.tokens[after].is(op)) return false;
  return true;
}

}  // namespace

std::vector<VectorLoad> vector_loads(const Grammar& g, const WorkItemRegion& site,
                                     const std::function<bool(std::size_t)>& live) {
  const ParsedKernel& k = g.parsed();
  const int fn = kernel_of(g, site);
  if (fn < 0) return {};
  std::vector<VectorLoad> out;
  for (const Param& p : k.functions[static_cast<std::size_t>(fn)].params) {
    if (!p.pointer) continue;
    VectorLoad v{p.name, p.base_type, "", 4};
    const std::string& t = p.base_type;
    if (t == "float") v.vector4 = "float4";
    else if (t == "int") v.vector4 = "int4";
    else if (t == "unsigned" || t == "unsigned int") v.vector4 = "uint4";
    else if (const std::string narrow = narrow_integer_type(t); narrow == "uint8") v = {p.name, t, "uchar4", 1};
    else if (narrow == "int8") v = {p.name, t, "char4", 1};
    else if (narrow == "uint16") v = {p.name, t, "ushort4", 2};
    else if (narrow == "int16") v = {p.name, t, "short4", 2};
    else continue;
    bool ok = true, seen = false;
    for (std::size_t e = 0; e < k.elements.size() && ok; ++e) {
      const Element& el = k.elements[e];
      if (el.function != fn || el.kind == ElementKind::FunctionHeader) continue;
      const std::size_t rule = g.rule_of_element(e);
      const bool inside = rule >= site.first_rule && rule <= site.last_rule;
      for (std::size_t t = el.tokens.first; t <= el.tokens.last && ok; ++t) {
        if (k.tokens[t].kind != TokenKind::Identifier || k.tokens[t].text != p.name || !live(t)) continue;
        if (t > 0 && (k.tokens[t - 1].is(".") || k.tokens[t - 1].is("->"))) continue;  // threadIdx.x: a member
        ok = inside && read_at_tid(k, t, site.tid);
        seen = true;
      }
    }
    if (ok && seen) out.push_back(v);
  }
  return out;
}

void drop_vector_reads(const WorkItemRegion& site, PatchState& s) {
  for (std::size_t r = site.first_rule; r <= site.last_rule && r < s.rules.size(); ++r) {
    auto& rewrites = s.rules[r].rewrites;
    for (auto it = rewrites.lower_bound(kVectorReadKey); it != rewrites.end() && it->first.rfind(kVectorReadKey, 0) == 0;)
      it = rewrites.erase(it);
  }
}

bool bound_is_parameters(const Grammar& g, const WorkItemRegion& site) {
  const int fn = kernel_of(g, site);
  if (fn < 0 || site.bound.empty()) return false;
  std::set<std::string> params;
  for (const Param& p : g.parsed().functions[static_cast<std::size_t>(fn)].params) params.insert(p.name);
  const std::string& b = site.bound;
  for (std::size_t i = 0; i < b.size();) {
    if (std::isalpha(static_cast<unsigned char>(b[i])) || b[i] == '_') {
      std::size_t j = i;
      while (j < b.size() && (std::isalnum(static_cast<unsigned char>(b[j])) || b[j] == '_')) ++j;
      if (!params.count(b.substr(i, j - i))) return false;
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(b[i]))) {
      while (i < b.size() && (std::isalnum(static_cast<unsigned char>(b[i])) || b[i] == '.')) ++i;  // 4u, 1e3
    } else {
      ++i;
    }
  }
  return true;
}

}  // namespace gi::grammar

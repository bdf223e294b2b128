#include "grammar/cuda_rewrites.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

namespace gi::grammar {
namespace {

// Types with an __ldg overload in CUDA's headers (no 3-component vectors).
const std::unordered_set<std::string> kLdgTypes = {
    "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "unsigned",
    "long", "unsigned long", "long long", "unsigned long long", "float", "double",
    "char2", "char4", "uchar2", "uchar4", "short2", "short4", "ushort2", "ushort4",
    "int2", "int4", "uint2", "uint4", "longlong2", "ulonglong2", "float2", "float4", "double2"};

const std::unordered_map<std::string, std::string> kFastMath = {
    {"expf", "__expf"},   {"exp10f", "__exp10f"}, {"logf", "__logf"}, {"log2f", "__log2f"},
    {"log10f", "__log10f"}, {"sinf", "__sinf"},   {"cosf", "__cosf"}, {"tanf", "__tanf"},
    {"powf", "__powf"},   {"sincosf", "__sincosf"}};

const std::unordered_set<std::string> kWriteOps = {"=", "+=", "-=", "*=", "/=", "%=", "&=",
                                                   "|=", "^=", "<<=", ">>=", "++", "--"};

struct Splice {
  std::size_t offset, length;
  std::string text;
};

std::string apply_splices(std::string_view text, std::vector<Splice> splices) {
  std::sort(splices.begin(), splices.end(), [](const Splice& a, const Splice& b) { return a.offset > b.offset; });
  std::string out(text);
  for (const auto& s : splices) out.replace(s.offset, s.length, s.text);
  return out;
}

std::vector<Token> fragment_tokens(std::string_view text) {
  try {
    return tokenize(text, "fragment");
  } catch (const std::exception&) {
    return {};  // a fragment that does not lex has no sites
  }
}

std::size_t matching(const std::vector<Token>& t, std::size_t open) {
  int depth = 0;
  for (std::size_t j = open; j < t.size(); ++j) {
    if (t[j].is("[") || t[j].is("(")) ++depth;
    if ((t[j].is("]") || t[j].is(")")) && --depth == 0) return j;
  }
  return std::string::npos;
}

}  // namespace

std::set<std::string> ldg_parameters(const ParsedKernel& k, int function) {
  std::set<std::string> out;
  if (function < 0) return out;
  for (const auto& p : k.functions[function].params)
    if (p.pointer && !p.written && kLdgTypes.count(p.base_type)) out.insert(p.name);
  return out;
}

std::string rewrite_ldg(std::string_view text, const std::set<std::string>& params, int* sites) {
  const auto t = fragment_tokens(text);
  std::vector<Splice> splices;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != TokenKind::Identifier || !params.count(t[i].text)) continue;
    if (i > 0 && (t[i - 1].is(".") || t[i - 1].is("->") || t[i - 1].is("&"))) continue;
    if (i + 1 >= t.size() || !t[i + 1].is("[")) continue;
    const std::size_t close = matching(t, i + 1);
    if (close == std::string::npos) continue;
    if (close + 1 < t.size() && kWriteOps.count(t[close + 1].text)) continue;
    const std::size_t begin = t[i].offset;
    const std::size_t end = t[close].offset + 1;
    splices.push_back({begin, end - begin, "__ldg(&" + std::string(text.substr(begin, end - begin)) + ")"});
    i = close;  // an index expression's own loads stay as they are
  }
  if (sites) *sites = static_cast<int>(splices.size());
  return apply_splices(text, std::move(splices));
}

std::string rewrite_fastmath(std::string_view text, int* sites) {
  const auto t = fragment_tokens(text);
  std::vector<Splice> splices;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].kind != TokenKind::Identifier || !t[i + 1].is("(")) continue;
    if (i > 0 && (t[i - 1].is(".") || t[i - 1].is("->"))) continue;
    const auto f = kFastMath.find(t[i].text);
    if (f == kFastMath.end()) continue;
    splices.push_back({t[i].offset, t[i].text.size(), f->second});
  }
  if (sites) *sites = static_cast<int>(splices.size());
  return apply_splices(text, std::move(splices));
}

bool specialisable(const Param& p) {
  if (p.pointer || p.written) return false;
  static const std::unordered_set<std::string> numeric = {
      "int", "unsigned int", "unsigned", "long", "long long", "unsigned long", "unsigned long long",
      "short", "unsigned short", "float", "double"};
  return numeric.count(p.base_type) > 0;
}

std::optional<std::string> constant_literal(const Param& p, const std::string& literal) {
  const bool floating = p.base_type == "float" || p.base_type == "double";
  std::string body = literal;
  if (floating && !body.empty() && (body.back() == 'f' || body.back() == 'F')) body.pop_back();
  if (body.empty()) return std::nullopt;
  // from_chars also reads "inf", "nan" and "infinity", which are no C++
  // literals: `constexpr float s = inff;` would not compile.
  const std::size_t first = body[0] == '-' ? 1 : 0;
  if (first >= body.size() || !(std::isdigit(static_cast<unsigned char>(body[first])) || body[first] == '.'))
    return std::nullopt;
  if (floating) {
    double v = 0;
    const auto r = std::from_chars(body.data(), body.data() + body.size(), v);
    if (r.ec != std::errc() || r.ptr != body.data() + body.size()) return std::nullopt;
    if (body.find_first_of(".eE") == std::string::npos) body += ".0";
    return p.base_type == "float" ? body + "f" : body;
  }
  long long v = 0;
  const auto r = std::from_chars(body.data(), body.data() + body.size(), v);
  if (r.ec != std::errc() || r.ptr != body.data() + body.size()) return std::nullopt;
  if (p.base_type.find("unsigned") != std::string::npos && v < 0) return std::nullopt;
  return body;
}

std::string rewrite_header(const Grammar& g, std::size_t rule, const HeaderEdits& edits,
                           std::vector<std::string>& body_lines) {
  const RuleContext& c = g.context(rule);
  const std::string& text = g.rule(rule).text;
  if (c.function_header < 0) return text;
  const ParsedKernel& k = g.parsed();
  const Function& f = k.functions[c.function_header];
  if (!f.is_kernel) return text;
  auto rel = [&](std::size_t token) { return k.tokens[token].offset - c.source_offset; };
  std::vector<Splice> splices;
  for (const auto& p : f.params) {
    std::size_t name_tok = std::string::npos, last_star = std::string::npos;
    for (std::size_t t = p.tokens.first; t <= p.tokens.last; ++t) {
      if (k.tokens[t].is("*")) last_star = t;
      if (k.tokens[t].kind == TokenKind::Identifier && k.tokens[t].text == p.name) name_tok = t;
    }
    if (name_tok == std::string::npos) continue;
    if (edits.restrict_params.count(p.name) && p.pointer && !p.restrict_qualified && last_star != std::string::npos) {
      // `float *p` and `float*p` have no space after the '*' to keep the
      // qualifier apart from the name (`float * __restrict__p` does not build).
      const std::size_t at = rel(last_star) + 1;
      const bool spaced = at < text.size() && std::isspace(static_cast<unsigned char>(text[at]));
      splices.push_back({at, 0, spaced ? " __restrict__" : " __restrict__ "});
    }
    const auto constant = edits.constants.find(p.name);
    if (constant != edits.constants.end() && specialisable(p)) {
      if (const auto lit = constant_literal(p, constant->second)) {
        splices.push_back({rel(name_tok), p.name.size(), p.name + "_unspecialised"});
        body_lines.push_back("constexpr " + p.base_type + " " + p.name + " = " + *lit + ";");
      }
    }
  }
  // The constexpr lines go after the header rule, which is after the whole
  // body when the body starts on the header's line (`k(int n) { a[0] = n; }`):
  // there they go right after the '{' instead.
  const std::size_t after_brace = rel(k.elements[f.header_element].tokens.last) + 1;
  if (!body_lines.empty() && text.find_first_not_of(" \t\r\n", after_brace) != std::string::npos) {
    std::string inline_lines;
    for (const auto& line : body_lines) inline_lines += " " + line;
    splices.push_back({after_brace, 0, inline_lines});
    body_lines.clear();
  }
  if (edits.launch_bounds) {
    const bool has = std::any_of(k.tokens.begin() + static_cast<long>(k.elements[f.header_element].tokens.first),
                                 k.tokens.begin() + static_cast<long>(f.name_token),
                                 [](const Token& t) { return t.is("__launch_bounds__"); });
    if (!has) {
      std::string lb = "__launch_bounds__(" + std::to_string(edits.launch_bounds->first);
      if (edits.launch_bounds->second > 0) lb += ", " + std::to_string(edits.launch_bounds->second);
      splices.push_back({rel(f.name_token), 0, lb + ") "});
    }
  }
  return apply_splices(text, std::move(splices));
}

}  // namespace gi::grammar

#include "grammar/type_aliases.hpp"

#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace gi::grammar {
namespace {

// The words a built-in type is spelled with, and the one-word names CUDA and
// <stdint.h> give such types.
bool type_word(const std::string& w) {
  static const std::set<std::string> words = {
      "float",    "double",   "int",      "unsigned", "signed",   "long",     "short",   "char",
      "bool",     "size_t",   "ptrdiff_t", "int8_t",  "uint8_t",  "int16_t",  "uint16_t", "int32_t",
      "uint32_t", "int64_t",  "uint64_t", "uint",     "ushort",   "uchar",    "ulong",   "float2",
      "float3",   "float4",   "int2",     "int3",     "int4",     "uint2",    "uint3",   "uint4",
      "double2",  "uchar4",   "longlong", "ulonglong"};
  return words.count(w) > 0;
}

// `words` as one spelling ("unsigned int") if each is a type word; "" if not.
std::string spelling(const std::string& words) {
  std::istringstream in(words);
  std::string w, out;
  while (in >> w) {
    if (!type_word(w)) return "";
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// The text with comments blanked (newlines kept, so directives stay lines).
std::string without_comments(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '"') {  // a string literal may hold "//"
      for (++i; i < out.size() && out[i] != '"' && out[i] != '\n'; ++i)
        if (out[i] == '\\') ++i;
      continue;
    }
    if (out[i] == '/' && out[i + 1] == '/') {
      for (; i < out.size() && out[i] != '\n'; ++i) out[i] = ' ';
    } else if (out[i] == '/' && out[i + 1] == '*') {
      for (; i + 1 < out.size() && !(out[i] == '*' && out[i + 1] == '/'); ++i)
        if (out[i] != '\n') out[i] = ' ';
      if (i + 1 < out.size()) out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> type_aliases(std::string_view text) {
  const std::string code = without_comments(text);
  std::map<std::string, std::string> out;
  // `#define fp float`: an object-like macro (no '(' right after its name).
  static const std::regex define(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*?)[ \t]*$)",
                                 std::regex::multiline);
  for (std::sregex_iterator it(code.begin(), code.end(), define), end; it != end; ++it)
    if (const std::string s = spelling((*it)[2]); !s.empty()) out[(*it)[1]] = s;
  // `typedef unsigned int uint_t;` and `using real = double;`.
  static const std::regex typedef_(R"(\btypedef\s+([\w\s]+?)\s+([A-Za-z_]\w*)\s*;)");
  for (std::sregex_iterator it(code.begin(), code.end(), typedef_), end; it != end; ++it)
    if (const std::string s = spelling((*it)[1]); !s.empty()) out[(*it)[2]] = s;
  static const std::regex using_(R"(\busing\s+([A-Za-z_]\w*)\s*=\s*([\w\s]+?)\s*;)");
  for (std::sregex_iterator it(code.begin(), code.end(), using_), end; it != end; ++it)
    if (const std::string s = spelling((*it)[2]); !s.empty()) out[(*it)[1]] = s;
  return out;
}

std::string resolve_type_alias(const std::map<std::string, std::string>& aliases, const std::string& base) {
  std::string t = base;
  for (int depth = 0; depth < 8; ++depth) {
    const auto it = aliases.find(t);
    if (it == aliases.end() || it->second == t) break;
    t = it->second;
  }
  return t;
}

}  // namespace gi::grammar

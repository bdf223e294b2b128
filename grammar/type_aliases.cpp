#include "grammar/type_aliases.hpp"

#include <regex>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

// The parser's reading of type names (header_type_names) decides what an
// alias is, so a name is an alias here exactly where the grammar takes it
// for a type.
std::map<std::string, std::string> type_aliases(std::string_view text) {
  return header_type_aliases(text, "type aliases");
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

std::string narrow_integer_type(const std::string& spelling) {
  static const std::map<std::string, std::string> types = {
      {"unsigned char", "uint8"},  {"uchar", "uint8"},           {"uint8_t", "uint8"},
      {"char", "int8"},            {"signed char", "int8"},      {"int8_t", "int8"},
      {"unsigned short", "uint16"}, {"unsigned short int", "uint16"}, {"ushort", "uint16"}, {"uint16_t", "uint16"},
      {"short", "int16"},          {"short int", "int16"},       {"signed short", "int16"},
      {"signed short int", "int16"}, {"int16_t", "int16"}};
  const auto t = types.find(spelling);
  return t == types.end() ? "" : t->second;
}

int cuda_vector_components(const std::string& type) {
  static const std::regex vector(R"((u?char|u?short|u?int|u?long|u?longlong|float|double)([1-4]))");
  std::smatch m;
  return std::regex_match(type, m, vector) ? std::stoi(m[2].str()) : 0;
}

namespace {

// `type` without const and volatile (`const float ` -> `float`).
std::string unqualified(std::string type) {
  for (const std::string q : {"const ", "volatile "})
    for (std::size_t at; (at = type.find(q)) != std::string::npos;) type.erase(at, q.size());
  while (!type.empty() && type.back() == ' ') type.pop_back();
  return type;
}

}  // namespace

int builtin_type_bytes(const std::string& spelled) {
  const std::string type = unqualified(spelled);
  static const std::map<std::string, int> scalars = {
      {"bool", 1},          {"float", 4},      {"int", 4},           {"unsigned", 4},    {"unsigned int", 4},
      {"uint", 4},          {"signed", 4},     {"signed int", 4},    {"int32_t", 4},     {"uint32_t", 4},
      {"double", 8},        {"long", 8},       {"unsigned long", 8}, {"long long", 8},   {"unsigned long long", 8},
      {"size_t", 8},        {"int64_t", 8},    {"uint64_t", 8},      {"half", 2},        {"__half", 2}};
  if (const auto s = scalars.find(type); s != scalars.end()) return s->second;
  const std::string narrow = narrow_integer_type(type);
  if (!narrow.empty()) return narrow.back() == '8' ? 1 : 2;
  if (const int n = cuda_vector_components(type)) {
    static const std::regex component(R"((u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4])");
    std::smatch m;
    std::regex_match(type, m, component);
    static const std::map<std::string, int> bytes = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2},
                                                     {"int", 4},  {"uint", 4},  {"float", 4}, {"long", 8},
                                                     {"ulong", 8}, {"longlong", 8}, {"ulonglong", 8}, {"double", 8}};
    return n * bytes.at(m[1].str());
  }
  return 0;
}

int builtin_type_alignment(const std::string& type) {
  const int bytes = builtin_type_bytes(type);
  const int n = cuda_vector_components(unqualified(type));
  return n == 3 || n == 1 ? bytes / n : bytes;
}

}  // namespace gi::grammar

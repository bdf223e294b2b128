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

}  // namespace gi::grammar

// Structs read as records of one component type (grammar/record_type.hpp).
#include "grammar/record_type.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "grammar/token.hpp"
#include "grammar/type_aliases.hpp"

namespace gi::grammar {
namespace {

// A member type gi generates: its component type, components, bytes and
// alignment as CUDA lays them out (float4 and int4 on 16 bytes, float3 on 4).
struct MemberType {
  const char* word;
  int components;
  std::size_t bytes, align;
};

const std::map<std::string, MemberType>& member_types() {
  static const std::map<std::string, MemberType> types = {
      {"float", {"float", 1, 4, 4}},       {"float2", {"float", 2, 8, 8}},    {"float3", {"float", 3, 12, 4}},
      {"float4", {"float", 4, 16, 16}},    {"int", {"int", 1, 4, 4}},         {"int2", {"int", 2, 8, 8}},
      {"int3", {"int", 3, 12, 4}},         {"int4", {"int", 4, 16, 16}},      {"unsigned", {"unsigned", 1, 4, 4}},
      {"unsigned int", {"unsigned", 1, 4, 4}}, {"uint2", {"unsigned", 2, 8, 8}}, {"uint3", {"unsigned", 3, 12, 4}},
      {"uint4", {"unsigned", 4, 16, 16}},  {"double", {"double", 1, 8, 8}},   {"double2", {"double", 2, 16, 16}},
  };
  return types;
}

// "float[9]" -> ("float", 9); "float3" -> ("float3", 1); ("", 0) for a malformed entry.
std::pair<std::string, long long> entry_parts(const std::string& entry) {
  static const std::regex form(R"(\s*([A-Za-z_][A-Za-z0-9_ ]*?)\s*(?:\[\s*([0-9]+)\s*\])?\s*)");
  std::smatch m;
  if (!std::regex_match(entry, m, form)) return {"", 0};
  long long n = 1;
  if (m[2].matched) {
    try {
      n = std::stoll(m[2].str());
    } catch (const std::exception&) {
      return {"", 0};
    }
  }
  return {m[1].str(), n};
}

// A layout entry's member type and array length; nullptr, with `refusal`,
// for an entry that names no member type gi generates.
const MemberType* entry_type(const std::string& entry, long long& length, std::string& refusal) {
  const auto [type, n] = entry_parts(entry);
  const auto t = member_types().find(type);
  if (t == member_types().end() || n < 1) {
    refusal = "'" + entry + "' is no member type gi generates (float, int, unsigned, double, their CUDA vectors "
              "such as float3 or int4; an array as float[9])";
    return nullptr;
  }
  length = n;
  return &t->second;
}

class RecordReader {
 public:
  RecordReader(const std::vector<Token>& tokens, const TypeAliases* aliases) : aliases_(aliases) {
    for (const Token& t : tokens)
      if (t.kind != TokenKind::Comment) tokens_.push_back(t);
  }

  std::optional<RecordType> find(const std::string& name, std::string& why, int depth = 0) {
    if (depth > 8) {
      why = "'" + name + "' nests structs more than 8 deep";
      return std::nullopt;
    }
    const auto body = definition(name);
    if (!body) {
      why = "the file defines no struct '" + name + "' gi can read (struct " + name + " { ... }; or typedef struct "
            "{ ... } " + name + ";)";
      return std::nullopt;
    }
    RecordType r;
    r.name = name;
    r.line = tokens_[body->first].line;
    if (!members(body->first + 1, body->second, r.layout, r.members, why, depth)) return std::nullopt;
    if (r.layout.empty()) {
      why = "struct '" + name + "' has no data members";
      return std::nullopt;
    }
    r.words = record_words(r.layout);
    return r;
  }

 private:
  const Token& tok(std::size_t i) const {
    static const Token end{TokenKind::Punct, ""};
    return i < tokens_.size() ? tokens_[i] : end;
  }

  // The `{` and `}` of name's definition.
  std::optional<std::pair<std::size_t, std::size_t>> definition(const std::string& name) const {
    for (std::size_t i = 0; i + 2 < tokens_.size(); ++i) {
      if (!tok(i).is("struct")) continue;
      // struct NAME { ... }
      if (tok(i + 1).is(name) && tok(i + 2).is("{")) return brace(i + 2);
      // typedef struct [TAG] { ... } NAME ;
      if (i > 0 && tok(i - 1).is("typedef")) {
        std::size_t open = i + 1;
        if (tok(open).kind == TokenKind::Identifier) ++open;
        if (!tok(open).is("{")) {
          // typedef struct TAG NAME;  -> TAG's definition
          if (tok(i + 2).is(name) && tok(i + 3).is(";") && tok(i + 1).kind == TokenKind::Identifier)
            if (auto d = definition(tok(i + 1).text); d && tok(i + 1).text != name) return d;
          continue;
        }
        const std::size_t close = closing_bracket(tokens_, open);
        if (tok(close + 1).is(name) && tok(close + 2).is(";")) return std::make_pair(open, close);
      }
    }
    return std::nullopt;
  }

  std::optional<std::pair<std::size_t, std::size_t>> brace(std::size_t open) const {
    const std::size_t close = closing_bracket(tokens_, open);
    if (close >= tokens_.size()) return std::nullopt;
    return std::make_pair(open, close);
  }

  // The data members of [first, last): each declarator's layout entry.
  bool members(std::size_t first, std::size_t last, std::vector<std::string>& layout, std::vector<std::string>& names,
               std::string& why, int depth) {
    std::size_t i = first;
    while (i < last) {
      // public: / private: / protected:
      if ((tok(i).is("public") || tok(i).is("private") || tok(i).is("protected")) && tok(i + 1).is(":")) {
        i += 2;
        continue;
      }
      // A declaration runs to its `;`, a member function to its body's `}`.
      std::size_t end = i;
      bool function = false, is_static = false;
      while (end < last && !tok(end).is(";")) {
        if (tok(end).is("(")) function = true;
        if (tok(end).is("static") || tok(end).is("typedef") || tok(end).is("using") || tok(end).is("enum"))
          is_static = true;
        if (tok(end).is("{")) {
          end = closing_bracket(tokens_, end);
          if (function) break;  // a member function's body: no `;` needed
          continue;
        }
        if (tok(end).is("(") || tok(end).is("[")) {
          end = closing_bracket(tokens_, end) + 1;
          continue;
        }
        ++end;
      }
      if (!function && !is_static && end > i && !declaration(i, end, layout, names, why, depth)) return false;
      i = end + 1;
    }
    return true;
  }

  // `T a, b[3][3];` (const and volatile ignored).
  bool declaration(std::size_t first, std::size_t end, std::vector<std::string>& layout,
                   std::vector<std::string>& names, std::string& why, int depth) {
    std::string type;
    std::size_t i = first;
    for (; i < end; ++i) {
      const Token& t = tok(i);
      if (t.is("const") || t.is("volatile") || t.is("struct")) continue;
      if (t.is("__align__") || t.is("alignas") || t.is("union")) {
        why = "line " + std::to_string(t.line) + ": '" + t.text + "' sets a layout gi does not follow";
        return false;
      }
      if (t.kind != TokenKind::Identifier) break;
      // The type's words end where a declarator starts: a name followed by , ; [ = or a bit field's :.
      if (!type.empty() && (tok(i + 1).is(",") || tok(i + 1).is("[") || tok(i + 1).is("=") || tok(i + 1).is(":") ||
                            i + 1 == end))
        break;
      type += (type.empty() ? "" : " ") + t.text;
    }
    if (aliases_ != nullptr) type = resolve_type_alias(*aliases_, type);
    if (type == "unsigned int") type = "unsigned";
    std::vector<std::string> inner, inner_names;  // a struct member's own layout
    const auto known = member_types().find(type);
    if (known == member_types().end()) {
      std::string inner_why;
      // A built-in type gi does not generate (long, char, short) is no struct to look for.
      const bool built_in = !type.empty() && is_cpp_keyword(type.substr(0, type.find(' ')));
      const auto nested = type.empty() || built_in ? std::nullopt : find(type, inner_why, depth + 1);
      if (!nested) {
        why = "line " + std::to_string(tok(first).line) + ": a member of type '" + type +
              "', which gi does not generate" + (inner_why.empty() ? "" : " (" + inner_why + ")");
        return false;
      }
      inner = nested->layout;
      inner_names = nested->members;
    }
    // Declarators: name, name[N], name[N][M], separated by commas.
    while (i < end) {
      if (tok(i).kind != TokenKind::Identifier) {
        why = "line " + std::to_string(tok(i).line) + ": a member gi cannot read near '" + tok(i).text + "'";
        return false;
      }
      long long length = 1;
      std::size_t j = i + 1;
      while (tok(j).is("[")) {
        if (tok(j + 1).kind != TokenKind::Number || !tok(j + 2).is("]")) {
          why = "line " + std::to_string(tok(j).line) + ": member '" + tok(i).text +
                "' is an array of a length that is no number";
          return false;
        }
        try {
          length *= std::stoll(tok(j + 1).text);
        } catch (const std::exception&) {
          why = "line " + std::to_string(tok(j).line) + ": member '" + tok(i).text + "' has no length gi can read";
          return false;
        }
        j += 3;
      }
      if (tok(j).is(":")) {
        why = "line " + std::to_string(tok(j).line) + ": member '" + tok(i).text + "' is a bit field";
        return false;
      }
      const std::string member = tok(i).text;
      if (!inner.empty()) {
        for (long long c = 0; c < length; ++c) {
          layout.insert(layout.end(), inner.begin(), inner.end());
          for (const std::string& n : inner_names)
            names.push_back(member + (length == 1 ? "" : "_" + std::to_string(c)) + "_" + n);
        }
      } else {
        layout.push_back(length == 1 ? type : type + "[" + std::to_string(length) + "]");
        names.push_back(member);
      }
      // Past a default member initializer (`float w = 1.f;`) to the next declarator.
      while (j < end && !tok(j).is(",")) j = tok(j).is("(") || tok(j).is("{") ? closing_bracket(tokens_, j) + 1 : j + 1;
      i = j + 1;
    }
    return true;
  }

  std::vector<Token> tokens_;
  const TypeAliases* aliases_ = nullptr;
};

}  // namespace

RecordWords record_words(const std::vector<std::string>& layout) {
  RecordWords out;
  std::size_t offset = 0, align = 1;
  std::set<std::string> words;
  for (const std::string& entry : layout) {
    long long length = 0;
    const MemberType* t = entry_type(entry, length, out.refusal);
    if (t == nullptr) return out;
    if (offset % t->align != 0) {
      out.refusal = "'" + entry + "' starts " + std::to_string(t->align - offset % t->align) +
                    " bytes of padding after the members before it; gi generates records with none";
      return out;
    }
    words.insert(t->word);
    align = std::max(align, t->align);
    offset += t->bytes * static_cast<std::size_t>(length);
    out.words += t->components * static_cast<int>(length);
  }
  if (layout.empty()) {
    out.refusal = "a record with no members";
    return out;
  }
  if (offset % align != 0) {
    out.refusal = "the record ends in " + std::to_string(align - offset % align) +
                  " bytes of padding (it is aligned to " + std::to_string(align) + "); gi generates records with none";
    return out;
  }
  if (words.size() > 1) {
    std::string list;
    for (const std::string& w : words) list += (list.empty() ? "" : ", ") + w;
    out.refusal = "the record mixes component types (" + list + "); gi generates records of one";
    return out;
  }
  out.word = *words.begin();
  out.bytes = offset;
  return out;
}

std::optional<RecordType> find_record_type(std::string_view source, const std::string& file_name,
                                           const std::string& name, std::string& why) {
  try {
    return find_record_type(tokenize(source, file_name), name, why);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::optional<RecordType> find_record_type(const std::vector<Token>& tokens, const std::string& name, std::string& why,
                                           const TypeAliases* aliases) {
  // `int`, `unsigned int`, `const float`: a built-in type's first word is a
  // keyword, no struct's name; nor is a CUDA vector (float3) one.
  if (name.empty() || is_cpp_keyword(name.substr(0, name.find(' '))) || cuda_vector_components(name) > 0) {
    why = "'" + name + "' is no struct";
    return std::nullopt;
  }
  RecordReader reader(tokens, aliases);
  return reader.find(name, why);
}

std::optional<RecordType> find_record_type(const std::vector<Token>& tokens, const std::vector<SourceFile>* headers,
                                           const std::string& name, std::string& why, const TypeAliases* aliases) {
  if (auto r = find_record_type(tokens, name, why, aliases)) return r;
  const std::string own_why = why;
  const std::string absent = "the file defines no struct '" + name + "'";
  // A definition gi cannot read in the file itself is the answer: it is the one in force.
  if (own_why.rfind(absent, 0) != 0) return std::nullopt;
  std::vector<const SourceFile*> places;
  if (headers != nullptr)
    for (const SourceFile& h : *headers) places.push_back(&h);
  places.push_back(&well_known_records());
  for (const SourceFile* h : places) {
    std::string header_why;
    if (auto r = find_record_type(h->tokens, name, header_why, aliases)) {
      r->file = h->name;
      return r;
    }
    if (header_why.rfind(absent, 0) != 0) {
      why = h->name + ": " + header_why;
      return std::nullopt;
    }
  }
  why = own_why + (headers != nullptr && !headers->empty() ? ", nor do the local headers it includes" : "");
  return std::nullopt;
}

const SourceFile& well_known_records() {
  static const SourceFile known = [] {
    SourceFile f;
    f.name = "NIfTI's nifti1_io.h (gi knows it)";
    f.text =
        "typedef struct { float m[3][3]; } mat33;\n"
        "typedef struct { float m[4][4]; } mat44;\n"
        "typedef struct { double m[3][3]; } nifti_dmat33;\n"
        "typedef struct { double m[4][4]; } nifti_dmat44;\n";
    f.tokens = tokenize(f.text, "well-known types");
    return f;
  }();
  return known;
}

std::string RecordType::where() const {
  if (file.empty()) return "line " + std::to_string(line);
  if (file == well_known_records().name) return file;
  return file + " line " + std::to_string(line);
}

std::vector<std::string> component_names(const RecordType& record) {
  std::vector<std::string> out;
  for (std::size_t m = 0; m < record.layout.size(); ++m) {
    const auto [type, length] = entry_parts(record.layout[m]);
    const auto t = member_types().find(type);
    const int components = t == member_types().end() ? 1 : t->second.components;
    for (long long e = 0; e < length; ++e)
      for (int c = 0; c < components; ++c)
        out.push_back(record.members[m] + (length > 1 ? "_" + std::to_string(e) : "") +
                      (components > 1 ? std::string("_") + "xyzw"[c] : ""));
  }
  return out;
}

RecordFields record_fields(const std::vector<std::string>& layout) {
  RecordFields out;
  std::size_t offset = 0, align = 1;
  for (const std::string& entry : layout) {
    long long length = 0;
    const MemberType* t = entry_type(entry, length, out.refusal);
    if (t == nullptr) return out;
    const MemberType& m = *t;
    offset = (offset + m.align - 1) / m.align * m.align;
    align = std::max(align, m.align);
    const std::size_t component = m.bytes / static_cast<std::size_t>(m.components);
    for (long long e = 0; e < length; ++e)
      for (int c = 0; c < m.components; ++c)
        out.components.emplace_back(m.word, offset + static_cast<std::size_t>(e) * m.bytes + c * component);
    offset += m.bytes * static_cast<std::size_t>(length);
  }
  out.bytes = (offset + align - 1) / align * align;
  return out;
}

}  // namespace gi::grammar

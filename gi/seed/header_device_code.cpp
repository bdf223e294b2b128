// The device code a kernel needs from its headers (gi/seed/header_device_code.hpp).
#include "gi/seed/header_device_code.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "gi/seed/system_header_stand_ins.hpp"
#include "grammar/kernel_structure.hpp"
#include "grammar/record_type.hpp"
#include "grammar/type_aliases.hpp"

namespace gi {
namespace {

using grammar::Token;
using grammar::TokenKind;

enum class ItemKind { Directive, Open, Close, Code };

// One top-level piece of a header: a directive, a namespace's braces, or a
// declaration or definition.
struct Item {
  ItemKind kind = ItemKind::Code;
  std::size_t first = 0, last = 0;  // tokens
  std::string text;                 // Open/Close: the brace line
  bool candidate = false;           // device code gi may keep
  bool always = false;              // kept whatever the kernel names
  bool is_operator = false, is_type = false;
  std::set<std::string> declares, names;
  std::set<std::string> head;  // the names before a function's body: an operator's operand types
};

Item make_item(ItemKind kind, std::size_t first, std::size_t last, std::string text = "", bool always = false) {
  Item it;
  it.kind = kind;
  it.first = first;
  it.last = last;
  it.text = std::move(text);
  it.always = always;
  return it;
}

bool is_code(const Token& t) { return t.kind != TokenKind::Comment; }

// A `#define`'s name and body (a function-like macro's parameters left
// out); nullopt for any other directive.
std::optional<std::pair<std::string, std::string>> definition(const std::string& directive) {
  static const std::regex define(R"(^\s*#\s*define\s+([A-Za-z_]\w*)(?:\([^)]*\))?\s*(.*)$)");
  std::smatch m;
  if (!std::regex_search(directive, m, define)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].str());
}

// `#define NAME body` where body holds __device__: a function marked with
// NAME is device code (NiftyReg's `#define DEVICE __host__ __device__`).
std::set<std::string> device_macros(const std::vector<grammar::SourceFile>& headers) {
  std::set<std::string> out;
  for (const grammar::SourceFile& h : headers)
    for (const Token& t : h.tokens)
      if (t.kind == TokenKind::Preprocessor)
        if (const auto d = definition(t.text); d && d->second.find("__device__") != std::string::npos)
          out.insert(d->first);
  return out;
}

class HeaderItems {
 public:
  HeaderItems(const grammar::SourceFile& h, const std::set<std::string>& device_macros,
              std::set<std::string>& namespaces)
      : t_(h.tokens), device_macros_(device_macros), namespaces_(namespaces) {}

  std::vector<Item> split() {
    std::vector<std::size_t> closes;  // the `}` of each namespace open here
    std::size_t i = 0;
    while (i < t_.size()) {
      const Token& t = t_[i];
      if (!is_code(t)) {
        ++i;
        continue;
      }
      if (t.kind == TokenKind::Preprocessor) {
        static const std::regex skipped(R"(^\s*#\s*(include|import|pragma\s+once)\b)");
        if (!std::regex_search(t.text, skipped)) items_.push_back(directive(i));
        ++i;
        continue;
      }
      if (!closes.empty() && i == closes.back()) {
        items_.push_back(make_item(ItemKind::Close, i, i, "}", true));
        closes.pop_back();
        ++i;
        continue;
      }
      // namespace N {, namespace A::B {, extern "C" {
      if (t.is("namespace") || (t.is("extern") && next(i) < t_.size() && t_[next(i)].kind == TokenKind::String)) {
        std::size_t j = next(i);
        std::string head = t.text;
        while (j < t_.size() && !t_[j].is("{") && !t_[j].is(";") && !t_[j].is("=")) {
          head += " " + t_[j].text;
          if (t.is("namespace") && t_[j].kind == TokenKind::Identifier) namespaces_.insert(t_[j].text);
          j = next(j);
        }
        if (j < t_.size() && t_[j].is("{")) {
          closes.push_back(grammar::closing_bracket(t_, j));
          items_.push_back(make_item(ItemKind::Open, i, j, head + " {", true));
          i = j + 1;
          continue;
        }
      }
      i = code_item(i, closes.empty() ? t_.size() : closes.back());
    }
    return std::move(items_);
  }

 private:
  std::size_t next(std::size_t i) const {
    ++i;
    while (i < t_.size() && !is_code(t_[i])) ++i;
    return i;
  }

  // Every directive is kept; a `#define` declares its name, and its body
  // names what a use of it needs.
  Item directive(std::size_t i) const {
    Item d = make_item(ItemKind::Directive, i, i, "", true);
    if (const auto def = definition(t_[i].text)) {
      static const std::regex identifier(R"([A-Za-z_]\w*)");
      d.declares.insert(def->first);
      for (std::sregex_iterator w(def->second.begin(), def->second.end(), identifier), e; w != e; ++w)
        d.names.insert(w->str());
    }
    return d;
  }

  // The declaration or definition from `first`, up to `limit` (its
  // namespace's `}`): classified, and the token after it returned.
  std::size_t code_item(std::size_t first, std::size_t limit) {
    std::size_t j = first, end = first, body = 0;
    bool paren = false, function = false, typeish = false;
    while (j < limit) {
      const Token& t = t_[j];
      if (t.kind == TokenKind::Preprocessor) break;  // a directive inside a declaration's head: end it there
      // `template<class T>`: its `class` makes no type of what follows (a
      // device function template is a function).
      if (t.is("template") && skip_template(j) != j) {
        j = skip_template(j);
        end = j - 1;
        continue;
      }
      if (t.is("struct") || t.is("class") || t.is("union") || t.is("enum") || t.is("typedef")) typeish = !paren;
      if (t.is(";")) {
        end = j;
        break;
      }
      if (t.is("(") || t.is("[")) {
        if (t.is("(")) {
          const std::size_t before = j > first ? j - 1 : j;
          static const std::set<std::string> not_a_call = {"__align__", "alignas", "__attribute__", "__declspec",
                                                           "decltype", "sizeof", "__launch_bounds__"};
          if (!not_a_call.count(t_[before].text) && !typeish) paren = true;
        }
        j = grammar::closing_bracket(t_, j) + 1;
        end = j - 1;
        continue;
      }
      if (t.is("{")) {
        const std::size_t close = grammar::closing_bracket(t_, j);
        const bool initializer = j > first && t_[j - 1].is("=");
        if (paren && !initializer) {  // a function's body
          function = true;
          body = j;
          end = std::min(close, limit - 1);
          j = close + 1;
          break;
        }
        j = close + 1;
        end = j - 1;
        continue;
      }
      if (t.is("}")) break;  // an unbalanced `}`: not ours
      end = j++;
    }
    if (end < first) end = first;
    Item it = make_item(ItemKind::Code, first, end);
    classify(it, function, body);
    items_.push_back(std::move(it));
    return std::max(end + 1, first + 1);
  }

  void classify(Item& it, bool function, std::size_t body) {
    classify_kind(it, function, body);
    // Keywords are tokens like names; none is a name the kernel needs.
    for (auto i = it.declares.begin(); i != it.declares.end();)
      i = grammar::is_cpp_keyword(*i) && *i != "operator" ? it.declares.erase(i) : std::next(i);
    for (auto i = it.names.begin(); i != it.names.end();) i = grammar::is_cpp_keyword(*i) ? it.names.erase(i) : std::next(i);
  }

  void classify_kind(Item& it, bool function, std::size_t body) {
    bool device = false, global = false, uses_std = false, constant = false;
    const std::size_t head_last = function ? body : it.last;
    for (std::size_t i = it.first; i <= it.last && i < t_.size(); ++i) {
      const Token& t = t_[i];
      if (t.kind != TokenKind::Identifier) continue;
      it.names.insert(t.text);
      if (t.text == "std") uses_std = true;
      if (i > head_last) continue;
      if (i < head_last) it.head.insert(t.text);
      if (t.text == "__device__" || device_macros_.count(t.text)) device = true;
      if (t.text == "__global__") global = true;
      if (t.text == "__constant__") constant = true;
    }
    if (global || uses_std) return;
    const Token& lead = t_[skip_template(it.first)];
    if (lead.is("using") && t_[next(skip_template(it.first))].is("namespace")) {
      // `using namespace N;`: kept where a kept header opens N.
      const std::size_t n = next(next(skip_template(it.first)));
      it.always = n < t_.size() && namespaces_.count(t_[n].text) > 0;
      return;
    }
    if (lead.is("static_assert") || lead.is("template") || lead.is("friend")) return;
    const bool type_definition = lead.is("struct") || lead.is("class") || lead.is("union") || lead.is("enum") ||
                                 lead.is("typedef") || lead.is("using");
    if (function) {
      if (!device) return;
      it.candidate = true;
      declare_function(it, body);
      return;
    }
    if (type_definition) {
      if (has_host_member(it)) return;
      it.candidate = it.is_type = true;
      declare_type(it);
      return;
    }
    // A variable or a prototype: device ones only.
    if (!device && !constant) return;
    it.candidate = true;
    declare_function(it, it.last);
  }

  std::size_t skip_template(std::size_t i) const {
    while (i < t_.size() && !is_code(t_[i])) ++i;
    if (i < t_.size() && t_[i].is("template") && next(i) < t_.size() && t_[next(i)].is("<")) {
      int depth = 0;
      for (std::size_t j = next(i); j < t_.size(); j = next(j)) {
        if (t_[j].is("<")) ++depth;
        if (t_[j].is(">") && --depth == 0) return next(j);
        if (t_[j].is(">>") && (depth -= 2) <= 0) return next(j);
      }
    }
    return i;
  }

  // A struct whose body defines a member function that is not device code.
  bool has_host_member(const Item& it) const {
    for (std::size_t i = it.first; i < it.last; ++i) {
      if (!t_[i].is(")")) continue;
      std::size_t j = next(i);
      while (j < it.last && (t_[j].is("const") || t_[j].is("noexcept") || t_[j].is("override"))) j = next(j);
      if (j >= it.last || !t_[j].is("{")) continue;
      // A member function's body: its head, back to the previous `;`, `{` or `}`, must say device.
      bool device = false;
      for (std::size_t k = i; k > it.first && !t_[k - 1].is(";") && !t_[k - 1].is("{") && !t_[k - 1].is("}"); --k)
        if (t_[k - 1].text == "__device__" || device_macros_.count(t_[k - 1].text)) device = true;
      if (!device) return true;
    }
    return false;
  }

  // A function's or variable's name: the identifier before its parameter
  // list, or before `[`, `=` or `;`; an operator is one of the operators.
  void declare_function(Item& it, std::size_t head_last) {
    std::size_t name = it.first;
    for (std::size_t i = skip_template(it.first); i < head_last && i < t_.size(); i = next(i)) {
      if (t_[i].is("operator")) {
        it.is_operator = true;
        it.declares.insert("operator");
        return;
      }
      if (t_[i].is("(") || t_[i].is("[") || t_[i].is("=") || t_[i].is(";")) break;
      // An explicit specialisation, `Multiplier<uchar>()`, is the template's:
      // its arguments name no declaration.
      if (t_[i].is("<") && i == next(name) && t_[name].kind == TokenKind::Identifier) {
        for (int depth = 0; i < head_last && i < t_.size(); i = next(i)) {
          if (t_[i].is("<")) ++depth;
          if (t_[i].is(">") && --depth == 0) break;
          if (t_[i].is(">>") && (depth -= 2) <= 0) break;
        }
        continue;
      }
      if (t_[i].kind == TokenKind::Identifier) name = i;
    }
    if (t_[name].kind == TokenKind::Identifier) it.declares.insert(t_[name].text);
  }

  // A type's name: `struct N`, `typedef ... N;`, `using N =`; an enum's
  // enumerators too.
  void declare_type(Item& it) {
    const std::size_t lead = skip_template(it.first);
    if (t_[lead].is("using")) {
      it.declares.insert(t_[next(lead)].text);
      return;
    }
    if (t_[lead].is("typedef")) {
      // The last identifier before the `;` or a `[` at depth 0, past any body.
      std::size_t name = lead;
      for (std::size_t i = lead; i <= it.last && i < t_.size(); i = next(i)) {
        if (t_[i].is("{") || t_[i].is("(")) {
          // `typedef void (*F)(int);`: the name is inside the first parentheses.
          if (t_[i].is("(") && next(i) < t_.size() && t_[next(i)].is("*") && t_[next(next(i))].kind == TokenKind::Identifier)
            name = next(next(i));
          i = grammar::closing_bracket(t_, i);
          continue;
        }
        if (t_[i].is("[") || t_[i].is(";")) break;
        if (t_[i].kind == TokenKind::Identifier) name = i;
      }
      it.declares.insert(t_[name].text);
    }
    const std::size_t tag = next(lead);
    if (tag < t_.size() && t_[tag].kind == TokenKind::Identifier) it.declares.insert(t_[tag].text);
    if (t_[lead].is("enum") || (t_[lead].is("typedef") && t_[tag].is("enum")))
      for (std::size_t i = it.first; i < it.last; ++i)
        if (t_[i].kind == TokenKind::Identifier && (t_[next(i)].is(",") || t_[next(i)].is("=") || t_[next(i)].is("}")) &&
            (t_[i - 1].is("{") || t_[i - 1].is(",")))
          it.declares.insert(t_[i].text);
    // `struct A { ... } B;` (no typedef): B is a variable, A the type; both named.
    if (!t_[lead].is("typedef") && it.last > 0 && t_[it.last].is(";") && t_[it.last - 1].kind == TokenKind::Identifier)
      it.declares.insert(t_[it.last - 1].text);
  }

  const std::vector<Token>& t_;
  const std::set<std::string>& device_macros_;
  std::set<std::string>& namespaces_;
  std::vector<Item> items_;
};

// The structs gi knows by name (grammar::well_known_records), each with its
// one-line definition.
std::vector<std::pair<std::string, std::string>> known_records() {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string& text = grammar::well_known_records().text;
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t to = text.find('\n', from);
    const std::string line = text.substr(from, to - from);
    from = to == std::string::npos ? text.size() : to + 1;
    const std::size_t close = line.rfind('}'), semicolon = line.rfind(';');
    if (close == std::string::npos || semicolon < close) continue;
    std::string name = line.substr(close + 1, semicolon - close - 1);
    name.erase(0, name.find_first_not_of(' '));
    out.emplace_back(name, line);
  }
  return out;
}

std::string item_text(const grammar::SourceFile& h, const Item& it) {
  if (it.kind == ItemKind::Open || it.kind == ItemKind::Close) return it.text;
  const Token& a = h.tokens[it.first];
  const Token& b = h.tokens[it.last];
  return h.text.substr(a.offset, b.offset + b.text.size() - a.offset);
}

}  // namespace

HeaderDeviceCode header_device_code(std::string_view kernel_source, const std::string& file_name,
                                    const std::vector<grammar::SourceFile>& headers) {
  // What kernel.cu names, but in host functions, which no NVRTC compile sees.
  std::set<std::string> needed;
  const grammar::ParsedKernel k = grammar::parse_kernel(kernel_source, file_name);
  const std::vector<Token>& kernel_tokens = k.tokens;
  std::vector<bool> host(kernel_tokens.size(), false);
  for (const grammar::Element& e : k.elements)
    if (e.host_code)
      for (std::size_t i = e.tokens.first; i <= e.tokens.last && i < host.size(); ++i) host[i] = true;
  for (std::size_t i = 0; i < kernel_tokens.size(); ++i)
    if (kernel_tokens[i].kind == TokenKind::Identifier && !host[i]) needed.insert(kernel_tokens[i].text);

  const std::set<std::string> macros = device_macros(headers);
  std::set<std::string> namespaces;
  std::vector<std::vector<Item>> items;
  for (const grammar::SourceFile& h : headers) items.push_back(HeaderItems(h, macros, namespaces).split());

  // The types an operator may take: CUDA's vectors and the headers' own.
  std::set<std::string> types;
  for (const auto& header : items)
    for (const Item& it : header)
      for (const std::string& n : it.head)
        if (grammar::cuda_vector_components(n) > 0) types.insert(n);
  for (const auto& header : items)
    for (const Item& it : header)
      if (it.is_type) types.insert(it.declares.begin(), it.declares.end());
  const auto known = known_records();
  for (const auto& [name, text] : known) types.insert(name);

  // What the kept code names, to a fixed point.
  std::vector<std::vector<bool>> keep(items.size());
  for (std::size_t h = 0; h < items.size(); ++h) keep[h].assign(items[h].size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (std::size_t h = 0; h < items.size(); ++h)
      for (std::size_t i = 0; i < items[h].size(); ++i) {
        Item& it = items[h][i];
        if (keep[h][i]) continue;
        bool wanted = it.always && it.kind != ItemKind::Directive;
        if (it.kind == ItemKind::Directive) {
          // Every directive is kept; a macro the kept code names adds what its body names.
          if (!it.declares.empty() && needed.count(*it.declares.begin())) {
            keep[h][i] = true;
            for (const std::string& n : it.names) grew = needed.insert(n).second || grew;
          }
          continue;
        }
        if (it.candidate) {
          for (const std::string& d : it.declares) wanted = wanted || needed.count(d);
          // An operator is named by no call: it is wanted where a type it takes is.
          if (it.is_operator)
            for (const std::string& n : it.head) wanted = wanted || (types.count(n) && needed.count(n));
        }
        if (!wanted) continue;
        keep[h][i] = true;
        grew = true;
        for (const std::string& n : it.names) needed.insert(n);
      }
  }

  HeaderDeviceCode out;
  // Structs gi knows that the kept code names and nothing here defines.
  std::set<std::string> defined;
  for (std::size_t h = 0; h < items.size(); ++h)
    for (std::size_t i = 0; i < items[h].size(); ++i)
      if (keep[h][i] && items[h][i].kind == ItemKind::Code)
        defined.insert(items[h][i].declares.begin(), items[h][i].declares.end());
  std::string why;
  out.text = "// The device code kernel.cu needs from its headers, cut out by gi init\n"
             "// (gi/seed/header_device_code.hpp): the headers themselves do not build with NVRTC.\n";
  for (const auto& [name, text] : known) {
    if (!needed.count(name) || defined.count(name) || grammar::find_record_type(kernel_tokens, name, why)) continue;
    out.text += text + "  // " + grammar::well_known_records().name + "\n";
    out.known.push_back(name);
  }
  // <math.h>'s M_PI and its kin, which the blanked system includes gave.
  if (std::any_of(needed.begin(), needed.end(), is_math_constant)) {
    out.text += "// <math.h>'s POSIX constants, which NVRTC does not define\n" + std::string(math_constants());
    out.math_constants = true;
  }
  // What was kept, a name once with its lines: "Ceil (Maths.hpp lines 72, 77)".
  std::vector<std::string> order;
  std::map<std::string, std::string> lines;
  for (std::size_t h = 0; h < items.size(); ++h) {
    out.text += "\n// from " + headers[h].name + "\n";
    for (std::size_t i = 0; i < items[h].size(); ++i) {
      const Item& it = items[h][i];
      if (it.kind != ItemKind::Directive && !keep[h][i]) continue;
      out.text += item_text(headers[h], it) + "\n";
      if (it.kind != ItemKind::Code) continue;
      for (const std::string& d : it.declares) {
        const std::string key = (d == "operator" ? "operators" : d) + " (" + headers[h].name;
        if (!lines.count(key)) order.push_back(key);
        lines[key] += (lines[key].empty() ? "" : ", ") + std::to_string(headers[h].tokens[it.first].line);
      }
    }
  }
  for (const std::string& key : order) {
    const auto count = std::count(lines[key].begin(), lines[key].end(), ',') + 1;
    if (key.rfind("operators (", 0) == 0 && count > 3)  // a header of vector arithmetic: how many, not where
      out.kept.push_back(std::to_string(count) + " " + key + ")");
    else
      out.kept.push_back(key + (count == 1 ? " line " : " lines ") + lines[key] + ")");
  }
  return out;
}

}  // namespace gi

#include "analysis/file_symbols.hpp"

#include <cctype>
#include <cstring>
#include <optional>
#include <regex>
#include <vector>

#include "grammar/constant_variables.hpp"

namespace gi::analysis {

using grammar::TokenKind;

namespace {

// A whole-number constant expression of a macro's body (`(NDIM + 2)`,
// `(DIVISIONS * WARP_N)`): literals, names of macros already known, + - * /
// % << >>, unary minus and parentheses; nullopt for anything else (a cast,
// a float, a name gi does not know, a division by zero).
class MacroExpression {
 public:
  MacroExpression(const std::string& text, const std::map<std::string, MacroValue>& known) : s_(text), known_(known) {}

  std::optional<long long> value() {
    const auto v = shift();
    skip();
    if (!v || at_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
    if (s_.compare(at_, 2, "//") == 0) at_ = s_.size();  // a trailing comment
  }
  bool take(const char* op) {
    skip();
    const std::size_t n = std::strlen(op);
    if (s_.compare(at_, n, op) != 0) return false;
    // `<` is not `<<`, `*` not `*=`: the operators here are whole.
    if (n == 1 && at_ + 1 < s_.size() && s_[at_ + 1] == op[0] && (op[0] == '<' || op[0] == '>')) return false;
    at_ += n;
    return true;
  }
  std::optional<long long> shift() {
    auto a = sum();
    while (a) {
      if (take("<<")) {
        const auto b = sum();
        if (!b || *b < 0 || *b > 62) return std::nullopt;
        a = *a << *b;
      } else if (take(">>")) {
        const auto b = sum();
        if (!b || *b < 0 || *b > 62) return std::nullopt;
        a = *a >> *b;
      } else {
        break;
      }
    }
    return a;
  }
  std::optional<long long> sum() {
    auto a = product();
    while (a) {
      if (take("+")) {
        const auto b = product();
        if (!b) return std::nullopt;
        a = *a + *b;
      } else if (take("-")) {
        const auto b = product();
        if (!b) return std::nullopt;
        a = *a - *b;
      } else {
        break;
      }
    }
    return a;
  }
  std::optional<long long> product() {
    auto a = unary();
    while (a) {
      const bool times = take("*"), divide = !times && take("/"), modulo = !times && !divide && take("%");
      if (!times && !divide && !modulo) break;
      const auto b = unary();
      if (!b || ((divide || modulo) && *b == 0)) return std::nullopt;
      a = times ? *a * *b : divide ? *a / *b : *a % *b;
    }
    return a;
  }
  std::optional<long long> unary() {
    if (take("-")) {
      const auto v = unary();
      return v ? std::optional<long long>(-*v) : std::nullopt;
    }
    if (take("(")) {
      const auto v = shift();
      if (!v || !take(")")) return std::nullopt;
      return v;
    }
    skip();
    const std::size_t start = at_;
    if (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
      try {
        std::size_t used = 0;
        const long long v = std::stoll(s_.substr(at_), &used, 0);
        at_ += used;
        while (at_ < s_.size() && std::strchr("uUlL", s_[at_])) ++at_;
        if (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '.'))
          return std::nullopt;  // a float or a suffix gi does not know
        return v;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    while (at_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[at_])) || s_[at_] == '_')) ++at_;
    const auto m = known_.find(s_.substr(start, at_ - start));
    if (at_ == start || m == known_.end()) return std::nullopt;
    return m->second.value;
  }

  const std::string& s_;
  const std::map<std::string, MacroValue>& known_;
  std::size_t at_ = 0;
};

}  // namespace

FileSymbols file_symbols(const grammar::ParsedKernel& k) {
  FileSymbols out;
  std::map<std::string, std::vector<int>> definitions;  // the lines that define or undefine each macro
  std::map<std::string, std::string> bodies;            // a macro's text after its name
  static const std::regex define(R"(^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(-?\d+)[uUlL]*\s*\)?\s*(//.*|/\*.*)?$)");
  static const std::regex any_define(R"(^\s*#\s*(define|undef)\s+([A-Za-z_]\w*))");
  for (std::size_t t = 0; t < k.tokens.size(); ++t) {
    const grammar::Token& tok = k.tokens[t];
    if (tok.kind == TokenKind::Preprocessor) {
      std::smatch m;
      if (!std::regex_search(tok.text, m, any_define)) continue;
      definitions[m[2].str()].push_back(tok.line);
      std::string body = m.suffix().str();
      body.erase(body.find_last_not_of(" \t\r\n") + 1);
      bodies[m[2].str()] = body;
      if (std::regex_match(tok.text, m, define)) {
        try {
          out.integer_macros[m[1].str()] = MacroValue{std::stoll(m[2].str()), tok.line};
        } catch (const std::exception&) {  // out of range: no value gi can use
        }
      }
      continue;
    }
  }
  for (grammar::ConstantVariable& c : grammar::constant_variables(k)) out.constant_variables[c.name] = std::move(c);
  // Macros defined once by a constant expression of numbers and other such
  // macros (`#define NVAR (VAR_DENSITY_ENERGY + 1)`), each pass taking those
  // whose names the passes before resolved.
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [name, lines] : definitions) {
      const std::string& body = bodies[name];
      if (lines.size() != 1 || out.integer_macros.count(name) || body.empty() || body[0] == '(') continue;
      if (const auto v = MacroExpression(body, out.integer_macros).value()) {
        out.integer_macros[name] = MacroValue{*v, lines[0]};
        grew = true;
      }
    }
  }
  for (const auto& [name, lines] : definitions) {
    if (lines.size() == 1) {
      if (!out.integer_macros.count(name) && bodies[name].find_first_not_of(" \t") != std::string::npos &&
          bodies[name][0] != '(')  // `#define F(x) ...` is function-like: no name gi reads alone
        out.macro_refusals[name] = "'" + name + "' is the macro '#define " + name + bodies[name] + "' (line " +
                                   std::to_string(lines[0]) + "), which gi does not evaluate";
      continue;
    }
    std::string where;
    for (int l : lines) where += (where.empty() ? "" : ", ") + std::to_string(l);
    out.macro_refusals[name] = "'" + name + "' has " + std::to_string(lines.size()) + " definitions (lines " + where +
                               "): which holds depends on the build";
    out.integer_macros.erase(name);
  }
  return out;
}

}  // namespace gi::analysis

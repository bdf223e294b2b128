#include "analysis/file_symbols.hpp"

#include <optional>
#include <regex>
#include <vector>

#include "grammar/constant_variables.hpp"
#include "grammar/preprocessor_conditions.hpp"

namespace gi::analysis {

using grammar::TokenKind;

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
  // whose names the passes before resolved, evaluated by the preprocessor's
  // own arithmetic (grammar/preprocessor_conditions.hpp), comments removed.
  for (bool grew = true; grew;) {
    grew = false;
    std::map<std::string, std::string> known;
    for (const auto& [name, m] : out.integer_macros) known[name] = std::to_string(m.value);
    for (const auto& [name, lines] : definitions) {
      const std::string& body = bodies[name];
      if (lines.size() != 1 || out.integer_macros.count(name) || body.empty() || body[0] == '(') continue;
      const auto d = grammar::directive_of("#if " + body);
      if (const auto v = d ? grammar::evaluate_condition(d->rest, known) : std::nullopt) {
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

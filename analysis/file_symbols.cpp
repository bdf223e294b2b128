#include "analysis/file_symbols.hpp"

#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "grammar/constant_variables.hpp"
#include "grammar/preprocessor_conditions.hpp"

namespace gi::analysis {

using grammar::TokenKind;

std::string MacroValue::where() const {
  return directive_place(file, line) +
         (conditional ? ", in a build without -D options" : "");
}

FileSymbols file_symbols(const grammar::ParsedKernel& k, const IncludedHeaders& headers, int until_line) {
  FileSymbols out;
  out.header_files = headers.files;
  out.header_code = headers.parsed;
  std::vector<DirectiveLine> lines = headers.lines;
  bool local_include = false;
  for (const grammar::Token& tok : k.tokens)
    if (tok.kind == TokenKind::Preprocessor && (until_line == 0 || tok.line < until_line)) {
      std::string text = std::regex_replace(tok.text, std::regex("\\\\\r?\n"), " ");
      const auto d = grammar::directive_of(text);
      if (d && d->keyword == "include" && d->rest.find('"') != std::string::npos) local_include = true;
      lines.push_back({std::move(text), tok.line, ""});
    }
  const DefaultBuild build = default_build(lines, headers.complete || !local_include);

  static const std::regex number(R"(^\(?\s*(-?\d+)[uUlL]*\s*\)?$)");
  for (const auto& [name, def] : build.defined) {
    if (def.function_like) {
      out.function_macros[name] =
          FunctionMacro{def.params, def.body, def.where()};
      continue;
    }
    std::smatch m;
    if (std::regex_match(def.body, m, number)) try {
        out.integer_macros[name] = MacroValue{std::stoll(m[1].str()), def.line, def.file, def.conditional};
      } catch (const std::exception&) {  // out of range: no value gi can use
      }
  }
  for (grammar::ConstantVariable& c : grammar::constant_variables(k)) out.constant_variables[c.name] = std::move(c);
  // Macros defined by a constant expression of numbers and other such
  // macros (`#define NVAR (VAR_DENSITY_ENERGY + 1)`), each pass taking those
  // whose names the passes before resolved, evaluated by the preprocessor's
  // own arithmetic (grammar/preprocessor_conditions.hpp).
  for (bool grew = true; grew;) {
    grew = false;
    std::map<std::string, std::string> known;
    for (const auto& [name, m] : out.integer_macros) known[name] = std::to_string(m.value);
    for (const auto& [name, def] : build.defined) {
      if (def.function_like || out.integer_macros.count(name) || def.body.empty()) continue;
      if (const auto v = grammar::evaluate_condition(def.body, known)) {
        out.integer_macros[name] = MacroValue{*v, def.line, def.file, def.conditional};
        grew = true;
      }
    }
  }
  // A file-scope whole-number constant (`const int threads_per_block = 512;`,
  // constexpr, static const) is its value wherever the kernel reads it, as a
  // macro is: Rodinia's particle filter counts its blocks by one.
  static const std::set<std::string> type_words = {"static", "const", "constexpr", "unsigned", "signed",
                                                   "int",    "long",  "short",     "size_t"};
  for (const grammar::Element& el : k.elements) {
    if (el.function >= 0 || (until_line > 0 && k.tokens[el.tokens.first].line >= until_line)) continue;
    std::vector<const grammar::Token*> code;
    for (std::size_t t = el.tokens.first; t <= el.tokens.last && t < k.tokens.size(); ++t)
      if (k.tokens[t].kind != TokenKind::Comment) code.push_back(&k.tokens[t]);
    if (code.size() < 5 || !code.back()->is(";")) continue;
    const std::size_t n = code.size();
    bool constant = false, words = true;
    for (std::size_t i = 0; i + 4 < n; ++i) {
      words = words && code[i]->kind == TokenKind::Identifier && type_words.count(code[i]->text);
      constant = constant || code[i]->is("const") || code[i]->is("constexpr");
    }
    const grammar::Token &name = *code[n - 4], &value = *code[n - 2];
    if (!words || !constant || name.kind != TokenKind::Identifier || !code[n - 3]->is("=") ||
        value.kind != TokenKind::Number || out.integer_macros.count(name.text))
      continue;
    std::smatch m;
    if (std::regex_match(value.text, m, number)) try {
        out.integer_macros[name.text] = MacroValue{std::stoll(m[1].str()), name.line, "", false};
      } catch (const std::exception&) {
      }
  }
  for (const auto& [name, def] : build.defined)
    if (!def.function_like && !out.integer_macros.count(name) && !def.body.empty())
      out.macro_refusals[name] = "'" + name + "' is the macro '#define " + name + " " + def.body + "' (" + def.where() +
                                 "), which gi does not evaluate";
  for (const auto& [name, why] : build.undecided) out.macro_refusals[name] = why;
  return out;
}

}  // namespace gi::analysis

#include "analysis/macro_expansion.hpp"

#include <map>

#include "grammar/token.hpp"

namespace gi::analysis {
namespace {

Expr substituted(const Expr& body, const std::map<std::string, const Expr*>& arguments, const Expr& call) {
  if (body.kind == ExprKind::Name)
    if (const auto a = arguments.find(body.text); a != arguments.end()) return *a->second;
  Expr out = body;
  out.first = call.first;
  out.last = call.last;
  for (Expr& c : out.children) c = substituted(c, arguments, call);
  return out;
}

}  // namespace

std::optional<Expr> expand_macro_call(const Expr& call, const std::string& name, const FunctionMacro& macro,
                                      std::string& why) {
  const std::string use = "'" + name + "' (the macro at " + macro.where + ")";
  if (call.children.size() != macro.params.size() + 1) {
    why = use + " takes " + std::to_string(macro.params.size()) + " arguments";
    return std::nullopt;
  }
  if (macro.body.find('#') != std::string::npos) {
    why = use + " pastes or quotes tokens, which gi does not follow";
    return std::nullopt;
  }
  std::vector<grammar::Token> tokens;
  try {
    tokens = grammar::tokenize(macro.body, name);
  } catch (const std::exception& e) {
    why = use + ": " + e.what();
    return std::nullopt;
  }
  std::string parse_why;
  const auto body = tokens.empty() ? std::nullopt : parse_expression(tokens, 0, tokens.size() - 1, &parse_why);
  if (!body) {
    why = use + " is no expression gi reads" + (parse_why.empty() ? "" : ": " + parse_why);
    return std::nullopt;
  }
  std::map<std::string, const Expr*> arguments;
  for (std::size_t i = 0; i < macro.params.size(); ++i) arguments[macro.params[i]] = &call.children[i + 1];
  return substituted(*body, arguments, call);
}

}  // namespace gi::analysis

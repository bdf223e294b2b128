#pragma once
// The grammar as BNF text (Langdon's style, one rule a line) and as JSON.
//   # gi-grammar 1 file="kernel.cu" final-newline=1
//   <start> ::= <fixed_kernel.cu_1> <_kernel.cu_2> ...
//   <if_kernel.cu_17> ::= "  if " <IF_kernel.cu_17> " {"
//   <IF_kernel.cu_17> ::= "(tid >= n)"
// The text form parses back to an identical grammar.
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/grammar.hpp"

namespace gi::grammar {

std::string to_bnf(const Grammar& g);
// Throws SourceError(origin, line, column, ...) on malformed text.
Grammar from_bnf(std::string_view text, const std::string& origin = "grammar");

nlohmann::json to_json(const Grammar& g);

}  // namespace gi::grammar

#pragma once
// An expression-level view of kernel statements: the grammar sees token
// ranges (grammar/kernel_structure.hpp); the analyses that decide whether a
// transformation is legal (uniformity, atomic sites) need to know what an
// expression is made of. This parses one token range of a CUDA C++
// expression into a small tree. It covers what kernels write inside
// statements (names, literals, member access, calls, indexing, casts,
// unary, binary, ternary and assignment operators, commas); what it does
// not understand is refused with a reason, and an analysis that meets a
// refusal refuses its transformation in turn.
// A texture fetch's template argument is part of its callee's name
// (`tex1Dfetch<float4>(t, i)` calls `tex1Dfetch<float4>`).
// `__mul24(a, b)` and `__umul24(a, b)` are parsed as the product `a * b`
// (exact for the index arithmetic they are written for), so sizes and thread
// indices read through them.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "grammar/token.hpp"

namespace gi::analysis {

enum class ExprKind {
  Name,     // text: the identifier (qualified names joined with ::)
  Literal,  // text: a number, string or character literal as written
  Member,   // text: "." or "->"; children: {object}; field: the member name
  Call,     // children: {callee, arguments...}
  Index,    // children: {array, index}
  Unary,    // text: the operator (prefix: - + ! ~ * & ++ --, postfix: "post++", "post--")
  Binary,   // text: the operator (arithmetic, comparison, logical, assignments, ",")
  Ternary,  // children: {condition, then, else}
  Cast,     // text: the type as written; children: {operand}
};

struct Expr {
  ExprKind kind = ExprKind::Literal;
  std::string text;
  std::string field;  // Member only
  std::vector<Expr> children;
  std::size_t first = 0, last = 0;  // its tokens (inclusive), comments skipped at both ends

  // The callee's name for a call of a plain or qualified name; "" otherwise.
  std::string callee() const;
  bool is_name(const std::string& name) const { return kind == ExprKind::Name && text == name; }
};

// Parses tokens [first, last] (inclusive; comments anywhere are skipped) as
// one expression. nullopt with `why` set when the range is empty, holds
// something this parser does not understand, or has tokens left over.
std::optional<Expr> parse_expression(const std::vector<grammar::Token>& tokens, std::size_t first, std::size_t last,
                                     std::string* why = nullptr);

// The expression's source text: its tokens joined by single spaces, except
// around '.', '->', '::', brackets and before ',' (for generated code and
// messages; the original spelling is in the seed).
std::string expression_text(const std::vector<grammar::Token>& tokens, const Expr& e);

// The expression's text from its tree, not its tokens: the same for two
// spellings of one expression (`(a + b)` and `a+b`), brackets only where
// the tree needs them. A key for comparing expressions.
std::string canonical_text(const Expr& e);

// The expression inside any casts around it: `(int)(a / b)` -> `a / b`
// (a cast's operand; brackets are no node of their own).
const Expr& without_outer_casts(const Expr& e);

// Every name the expression uses (Name nodes, member fields excluded), in order.
std::vector<std::string> names_in(const Expr& e);

// Whether `op` assigns its left operand (=, +=, -=, ..., and ++/-- in both forms).
bool is_assignment(const Expr& e);

// A literal's whole-number value (`16`, `0x200`, `4u`, `8UL`); nullopt for
// anything else (a float, a character, a name).
std::optional<long long> whole_literal(const Expr& e);

}  // namespace gi::analysis

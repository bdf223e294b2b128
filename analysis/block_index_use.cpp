// one_block_kernel (analysis/block_index_use.hpp).
#include "analysis/block_index_use.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "analysis/expression.hpp"
#include "analysis/thread_index.hpp"
#include "analysis/uniformity.hpp"
#include "grammar/call_graph.hpp"

namespace gi::analysis {

namespace {

using grammar::TokenKind;

// The first `blockIdx`, `gridDim`, or y/z component of threadIdx or
// blockDim among a function's tokens: its text and line; empty for none.
std::pair<std::string, int> block_dependence(const grammar::ParsedKernel& k, int function) {
  for (const grammar::Element& e : k.elements) {
    if (e.function != function) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < k.tokens.size(); ++t) {
      const grammar::Token& tok = k.tokens[t];
      if (tok.kind != TokenKind::Identifier) continue;
      if (tok.text == "blockIdx" || tok.text == "gridDim") return {tok.text, tok.line};
      // A 2-D or 3-D block: gi drafts blocks of B x 1 x 1 threads.
      if ((tok.text == "threadIdx" || tok.text == "blockDim") && t + 2 < k.tokens.size() && k.tokens[t + 1].is(".") &&
          (k.tokens[t + 2].is("y") || k.tokens[t + 2].is("z")))
        return {tok.text + "." + k.tokens[t + 2].text, tok.line};
    }
  }
  return {"", 0};
}

const std::regex kBlockWord("\\b(blockIdx|gridDim)\\b|\\b(threadIdx|blockDim)\\s*\\.\\s*[yz]\\b");

// Words whose meaning no header changes: C++ and CUDA keywords, built-in
// types and variables, and the device functions a kernel calls without a
// header of its own.
bool language_word(const std::string& w) {
  static const std::set<std::string> words = {
      "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default", "do", "double", "else",
      "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "nullptr", "register",
      "return", "short", "signed", "sizeof", "static", "static_cast", "reinterpret_cast", "const_cast", "struct",
      "switch", "template", "this", "true", "typedef", "typename", "union", "unsigned", "void", "volatile", "while",
      "size_t", "__global__", "__device__", "__host__", "__shared__", "__constant__", "__restrict__", "__forceinline__",
      "__inline__", "__noinline__", "__launch_bounds__", "threadIdx", "blockDim", "blockIdx", "gridDim", "warpSize", "float2", "float3",
      "float4", "int2", "int3", "int4", "uint", "uint2", "uint3", "uint4", "double2", "double3", "double4",
      "__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__ldg", "__activemask", "printf",
      "assert", "cudaTextureObject_t", "tex1Dfetch"};
  return words.count(w) > 0 || is_pure_math_function(w) || w.rfind("atomic", 0) == 0 || w.rfind("__shfl", 0) == 0;
}

// The first name among the reached functions' tokens that neither the file
// declares nor the language gives: a header gi did not read may make it a
// macro, or a function, that reads the block index. "" for none.
std::string unknown_name(const grammar::ParsedKernel& k, const std::vector<bool>& reached) {
  std::set<std::string> declared;
  for (const grammar::Declaration& d : k.declarations) declared.insert(d.name);
  for (const grammar::Function& f : k.functions) {
    declared.insert(f.name);
    for (const grammar::Param& p : f.params) declared.insert(p.name);
  }
  for (const grammar::Element& e : k.elements) {
    if (e.function < 0 || !reached[static_cast<std::size_t>(e.function)]) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < k.tokens.size(); ++t) {
      const grammar::Token& tok = k.tokens[t];
      if (tok.kind != TokenKind::Identifier || declared.count(tok.text) || language_word(tok.text)) continue;
      if (t > 0 && (k.tokens[t - 1].is(".") || k.tokens[t - 1].is("->"))) continue;  // a member
      return "'" + tok.text + "' (line " + std::to_string(tok.line) + ")";
    }
  }
  return "";
}

// A kernel that reads the block index only to single out the grid's first
// thread: locals defined from blockIdx (`int i = blockDim.x * block_id +
// threadIdx.x`, block_id = blockIdx.x) that are the global index on x, or
// blockIdx.x itself, and read nowhere but in `i == 0` or `i != 0` (Rodinia's
// particle filter sums its partial sums in thread 0 so). Only the first
// block works, so one block does the same. Its evidence; "" where not so.
std::string first_thread_only(const grammar::ParsedKernel& k, const grammar::Function& kernel) {
  const int fn = static_cast<int>(&kernel - k.functions.data());
  std::map<std::string, Expr> locals;               // block local -> its definition, block locals substituted
  std::vector<std::pair<std::size_t, std::size_t>> definitions;  // their declarations' tokens
  const auto substituted = [&](Expr e, const auto& self) -> Expr {
    if (e.kind == ExprKind::Name && locals.count(e.text)) return locals.at(e.text);
    for (Expr& c : e.children) c = self(c, self);
    return e;
  };
  const auto reads_block = [&](const Expr& e, const auto& self) -> bool {
    if (e.kind == ExprKind::Name && (e.text == "blockIdx" || e.text == "gridDim" || locals.count(e.text))) return true;
    for (const Expr& c : e.children)
      if (self(c, self)) return true;
    return false;
  };
  for (const grammar::Element& el : k.elements) {
    if (el.function != fn || el.kind != grammar::ElementKind::Declaration || !k.tokens[el.tokens.last].is(";")) continue;
    std::size_t eq = el.tokens.first;
    while (eq < el.tokens.last && !k.tokens[eq].is("=")) ++eq;
    if (eq >= el.tokens.last || eq == el.tokens.first || k.tokens[eq - 1].kind != TokenKind::Identifier) continue;
    const auto e = parse_expression(k.tokens, eq + 1, el.tokens.last - 1);
    if (!e || !reads_block(*e, reads_block)) continue;
    const Expr value = substituted(*e, substituted);
    const bool block_x = value.kind == ExprKind::Member && member_axis(value, "blockIdx") == 0;
    const GlobalIndexForm form = global_index_form(value);
    if (!block_x && form.axis != 0) return "";
    locals[k.tokens[eq - 1].text] = value;
    definitions.emplace_back(el.tokens.first, el.tokens.last);
  }
  if (locals.empty()) return "";
  int line = 0;
  std::string compared;
  for (const grammar::Element& el : k.elements) {
    if (el.function != fn) continue;
    for (std::size_t t = el.tokens.first; t <= el.tokens.last && t < k.tokens.size(); ++t) {
      const grammar::Token& tok = k.tokens[t];
      if (tok.kind != TokenKind::Identifier) continue;
      const bool in_definition = std::any_of(definitions.begin(), definitions.end(),
                                             [&](const auto& d) { return d.first <= t && t <= d.second; });
      if (tok.text == "blockIdx" || tok.text == "gridDim") {
        if (!in_definition) return "";
        continue;
      }
      // A 2-D or 3-D block: gi drafts blocks of B x 1 x 1 threads.
      if ((tok.text == "threadIdx" || tok.text == "blockDim") && t + 2 < k.tokens.size() && k.tokens[t + 1].is(".") &&
          (k.tokens[t + 2].is("y") || k.tokens[t + 2].is("z")))
        return "";
      if (!locals.count(tok.text) || in_definition || (t > 0 && (k.tokens[t - 1].is(".") || k.tokens[t - 1].is("->"))))
        continue;
      // `i == 0` or `i != 0`, the comparison not part of a larger operand.
      const bool compared_with_zero = t + 3 < k.tokens.size() &&
                                      (k.tokens[t + 1].is("==") || k.tokens[t + 1].is("!=")) &&
                                      k.tokens[t + 2].kind == TokenKind::Number && k.tokens[t + 2].text == "0" &&
                                      (k.tokens[t + 3].is(")") || k.tokens[t + 3].is("&&") ||
                                       k.tokens[t + 3].is("||") || k.tokens[t + 3].is(";"));
      if (!compared_with_zero) return "";
      if (line == 0) line = tok.line, compared = tok.text;
    }
  }
  if (line == 0) return "";
  return "the kernel reads the block index only in '" + compared + "', the global index, which line " +
         std::to_string(line) + " compares with 0: only the grid's first thread, in the first block, works";
}

}  // namespace

OneBlock one_block_kernel(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                          const IncludedHeaders& headers) {
  OneBlock out;
  const std::vector<bool> reached = grammar::functions_reachable_from(k, kernel.name);
  int helpers = 0;
  std::string first_thread;  // the kernel reads the block index only to pick the grid's first thread
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    if (!reached[f]) continue;
    const auto [what, line] = block_dependence(k, static_cast<int>(f));
    if (!what.empty()) {
      // An ordinary kernel over many blocks: no reason to give.
      if (&k.functions[f] != &kernel) return out;
      first_thread = first_thread_only(k, kernel);
      if (first_thread.empty()) return out;
    }
    if (&k.functions[f] != &kernel) ++helpers;
  }
  // A macro may read them where it is expanded.
  for (const grammar::Token& t : k.tokens)
    if (t.kind == TokenKind::Preprocessor && std::regex_search(t.text, kBlockWord)) {
      out.why_not = "line " + std::to_string(t.line) + ": a macro reads the block index or a 2-D block";
      return out;
    }
  for (const DirectiveLine& d : headers.lines)
    if (std::regex_search(d.text, kBlockWord)) {
      out.why_not = directive_place(d.file, d.line) + ": a macro reads the block index or a 2-D block";
      return out;
    }
  // What the file does not declare may come from a header, as a macro or a
  // function gi cannot read: either may read the block index.
  if (const std::string name = unknown_name(k, reached); !name.empty()) {
    out.why_not = "the kernel reads no block index itself, but it names " + name +
                  ", which this file does not declare: from a header, it may";
    return out;
  }
  out.one_block = true;
  if (!first_thread.empty()) {
    out.evidence = first_thread;
    return out;
  }
  out.evidence = helpers ? "the kernel and the " + std::to_string(helpers) + " function" + (helpers > 1 ? "s" : "") +
                              " it calls read neither blockIdx nor gridDim: every block would do the same work"
                        : "the kernel reads neither blockIdx nor gridDim: every block would do the same work";
  return out;
}

}  // namespace gi::analysis

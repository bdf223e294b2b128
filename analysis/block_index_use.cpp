// one_block_kernel (analysis/block_index_use.hpp).
#include "analysis/block_index_use.hpp"

#include <regex>
#include <set>
#include <vector>

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
      "__inline__", "__noinline__", "__launch_bounds__", "threadIdx", "blockDim", "warpSize", "float2", "float3",
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

}  // namespace

OneBlock one_block_kernel(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                          const IncludedHeaders& headers) {
  OneBlock out;
  const std::vector<bool> reached = grammar::functions_reachable_from(k, kernel.name);
  int helpers = 0;
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    if (!reached[f]) continue;
    const auto [what, line] = block_dependence(k, static_cast<int>(f));
    if (!what.empty()) return out;  // an ordinary kernel over many blocks: no reason to give
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
  out.evidence = helpers ? "the kernel and the " + std::to_string(helpers) + " function" + (helpers > 1 ? "s" : "") +
                              " it calls read neither blockIdx nor gridDim: every block would do the same work"
                        : "the kernel reads neither blockIdx nor gridDim: every block would do the same work";
  return out;
}

}  // namespace gi::analysis

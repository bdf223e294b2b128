#include "analysis/remap_sites.hpp"

#include <regex>

#include "analysis/parameter_use.hpp"
#include "analysis/token_ranges.hpp"
#include "grammar/call_graph.hpp"
#include "grammar/template_instance.hpp"

namespace gi::analysis {
namespace {

using grammar::TokenKind;

const char* const kBuiltins[] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};

bool is_builtin(const grammar::Token& t) {
  for (const char* b : kBuiltins)
    if (t.is(b)) return true;
  return false;
}

// Why token `t` makes the swap unsafe, or "": lanes regrouped (warp-level
// code) or a block's tiles laid out for its shape (shared memory).
std::string unsafe_word(const grammar::Token& t) {
  if (t.kind != TokenKind::Identifier) return "";
  const std::string& w = t.text;
  if (w == "__shared__" || w.rfind("__syncthreads", 0) == 0)
    return w + ": shared memory and barriers may lay tiles out for the block's shape";
  for (const char* warp : {"__shfl", "__ballot", "__any", "__all", "__match", "__reduce", "__syncwarp", "__activemask",
                           "__lanemask", "warpSize", "tiled_partition", "coalesced_threads"})
    if (w.rfind(warp, 0) == 0) return w + ": warp-level code, whose lanes the swap would regroup";
  if (w == "asm") return "inline asm: gi cannot see what it reads";
  if (w == "volatile") return "volatile: warp-synchronous code, whose lanes the swap would regroup";
  return "";
}

int axis_of(char c) { return c == 'x' ? 0 : c == 'y' ? 1 : 2; }

}  // namespace

RemapSites find_remap_sites(const grammar::ParsedKernel& k, const std::string& entry) {
  RemapSites out;
  std::vector<int> kernels;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].is_kernel && (entry.empty() || k.functions[f].name == grammar::entry_function_name(entry))) kernels.push_back(static_cast<int>(f));
  if (kernels.size() != 1) {
    out.refusals.push_back(kernels.empty() ? "no __global__ kernel named '" + entry + "'"
                                           : "the file has " + std::to_string(kernels.size()) +
                                                 " kernels and no entry names one (the spec's `entry`)");
    return out;
  }
  const grammar::Function& kernel = k.functions[static_cast<std::size_t>(kernels[0])];
  const std::vector<bool> reached = grammar::functions_reachable_from(k, kernel.name);
  bool unfit = false;
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    if (!reached[f]) continue;
    const grammar::Function& fn = k.functions[f];
    const std::size_t open = k.elements[static_cast<std::size_t>(fn.header_element)].tokens.last;
    const std::size_t end = closing(k.tokens, open);
    for (std::size_t t = k.elements[static_cast<std::size_t>(fn.header_element)].tokens.first; t <= end && t < k.tokens.size(); ++t) {
      const grammar::Token& x = k.tokens[t];
      std::string why = unsafe_word(x);
      if (why.empty() && &fn != &kernel && is_builtin(x))
        why = x.text + " in " + fn.name + ", which the kernel calls: the swap renames the kernel's own text only";
      if (why.empty()) continue;
      out.refusals.push_back("line " + std::to_string(x.line) + ": " + why);
      unfit = true;
    }
  }
  if (unfit) return out;
  out.kernel = kernels[0];
  const WorkItem work = analyse_parameter_use(k, kernel).work;
  // Each axis needs its thread index in the kernel (else the lanes of a
  // block along it would all take one item) and a guard on its global index.
  bool reads_thread_axis[3] = {false, false, false};
  const std::size_t open = k.elements[static_cast<std::size_t>(kernel.header_element)].tokens.last;
  const std::size_t end = closing(k.tokens, open);
  for (std::size_t t = open; t + 2 <= end; ++t)
    if (k.tokens[t].is("threadIdx") && k.tokens[t + 1].is(".") && k.tokens[t + 2].text.size() == 1)
      reads_thread_axis[axis_of(k.tokens[t + 2].text[0])] = true;
  const char* names = "xyz";
  auto axis_problem = [&](int a) -> std::string {
    const std::string A(1, names[a]);
    if (!reads_thread_axis[a]) return "the kernel reads no threadIdx." + A;
    if (!work.bound[a] || work.exact[a]) {  // an exact launch's count bounds no guard
      if (!work.refusal.empty() && a == 0) return "no guard bounds the global index " + A + ": " + work.refusal;
      return "no guard bounds the global index " + A + " (blockIdx." + A + " * blockDim." + A + " + threadIdx." + A +
             " < a size): the swapped grid rounds it up past the items";
    }
    return "";
  };
  for (const std::string pair : {"xy", "xz", "yz"}) {
    std::string problem = axis_problem(axis_of(pair[0]));
    if (problem.empty()) problem = axis_problem(axis_of(pair[1]));
    if (problem.empty()) {
      out.pairs.push_back(pair);
    } else if (pair == "xy" && reads_thread_axis[0] && reads_thread_axis[1]) {
      // A 2-D kernel refused: the case a reader expects a site in. 1-D kernels
      // (most) and the pairs with z are passed over silently.
      out.refusals.push_back("line " + std::to_string(k.tokens[kernel.name_token].line) + ": remap:xy in " +
                             kernel.name + ": " + problem);
    }
  }
  return out;
}

std::string swap_thread_axes(const std::string& text, const std::string& pair) {
  static const std::regex member(R"(\b(threadIdx|blockIdx|blockDim|gridDim)(\s*\.\s*)([xyz])\b)");
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), member), done; it != done; ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    char axis = m[3].str()[0];
    if (axis == pair[0]) axis = pair[1];
    else if (axis == pair[1]) axis = pair[0];
    out += m[1].str() + m[2].str() + axis;
    last = m[0].second;
  }
  out.append(last, text.cend());
  return out;
}

}  // namespace gi::analysis

// stage: `stage:p` writes each thread's record of K consecutive elements of
// the buffer p (the sites of grammar/edits/staged_stores.hpp) to shared
// memory first; after the guard every thread of the block meets at one
// barrier, and the block copies its records out in consecutive elements,
// so each store instruction of a warp fills whole memory segments instead
// of touching K times as many (issue 28's fourth family, coalescing: the
// jacobian field's 9 floats a voxel reach a third of the time on an H200).
//
//     extern __shared__ float4 gi_stage_area[];
//     const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;
//     float* gi_stage_out = reinterpret_cast<float*>(gi_stage_area);
//     ... the guarded region, `out[9 * tid + i] = v;` now
//         `gi_stage_out[(9 * tid + i) - 9 * gi_stage_first] = v;` ...
//     __syncthreads();
//     { items = min(N - gi_stage_first, blockDim.x);
//       for (j = threadIdx.x; j < 9 * items; j += blockDim.x)
//           out[9 * gi_stage_first + j] = gi_stage_out[j]; }
//
// The launch gives the block K * sizeof(element) bytes of dynamic shared
// memory per thread for each staged buffer (LaunchEffect::staged); several
// staged buffers lie one after another in it, each at a 16-byte boundary.
// Composes with line and CUDA edits and the reduction families that keep one
// item a thread (aggregate); not with those that change which thread has
// which item or that own the dynamic shared memory (coarsen, warp_per_item,
// privatise, remap; grammar/patch_apply.cpp), where the block's records
// would no longer be consecutive.
#include <algorithm>

#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/staged_stores.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

const StagedStore* site_named(const StagedStores& sites, const std::string& buffer) {
  for (const StagedStore& s : sites.sites)
    if (s.buffer == buffer) return &s;
  return nullptr;
}

// `p[INDEX]` (not a member `s.p[...]`) becomes `gi_stage_p[(INDEX) - K * gi_stage_first]`.
std::string staged_text(const std::string& text, const std::string& buffer, int components) {
  std::string out;
  std::size_t from = 0;
  for (;;) {
    std::size_t at = text.find(buffer, from);
    if (at == std::string::npos) break;
    const auto word = [&](std::size_t i) { return i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_'); };
    std::size_t open = at + buffer.size();
    while (open < text.size() && text[open] == ' ') ++open;
    const bool member = at > 0 && (text[at - 1] == '.' || (at > 1 && text.compare(at - 2, 2, "->") == 0));
    if ((at > 0 && word(at - 1)) || word(at + buffer.size()) || member || open >= text.size() || text[open] != '[') {
      out += text.substr(from, at + buffer.size() - from);
      from = at + buffer.size();
      continue;
    }
    int depth = 0;
    std::size_t close = open;
    for (; close < text.size(); ++close) {
      if (text[close] == '[') ++depth;
      if (text[close] == ']' && --depth == 0) break;
    }
    if (close >= text.size()) break;
    out += text.substr(from, at - from) + "gi_stage_" + buffer + "[(" + text.substr(open + 1, close - open - 1) + ") - " +
           std::to_string(components) + " * gi_stage_first]";
    from = close + 1;
  }
  return out + text.substr(from);
}

class StageFamily : public EditFamily {
 public:
  std::string name() const override { return "stage"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "stage:P (P: a buffer each thread writes as a record of K consecutive elements, p[K * tid + c])";
  }

  void parse(ArgumentReader& r, Edit& e) const override { e.literal = r.identifier(); }
  std::string print(const Edit& e) const override { return "stage:" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const StagedStores sites = find_staged_stores(g, context);
    if (site_named(sites, e.literal)) return std::nullopt;
    for (const std::string& why : sites.refusals)
      if (why.find("'" + e.literal + "'") != std::string::npos) return "no stage site '" + e.literal + "': " + why;
    return "no stage site '" + e.literal + "' in " + g.file_name() + ": " +
           (sites.refusals.empty() ? "it is not written as records of consecutive elements" : sites.refusals.front());
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const StagedStore& s : find_staged_stores(g, context).sites) out.push_back(Edit{name(), "", "", 0, 0, s.buffer});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return find_staged_stores(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const StagedStores sites = find_staged_stores(g, context);
    const StagedStore& site = *site_named(sites, e.literal);
    s.launch.staged[site.buffer] = static_cast<unsigned>(site.components) * site.element_bytes;
    for (std::size_t rule : site.rules) {
      const std::string buffer = site.buffer;
      const int k = site.components;
      s.rules[rule].rewrites[name() + " " + buffer] = [buffer, k](const std::string& text) { return staged_text(text, buffer, k); };
    }
    // Every staged buffer's declarations and copy-out, remade from all of them.
    std::vector<const StagedStore*> staged;
    for (const auto& [buffer, bytes] : s.launch.staged) staged.push_back(site_named(sites, buffer));
    const std::string indent = edits::indentation_of(g.rule(sites.region.first_rule).text);
    std::vector<std::string> open = {
        "// gi stage: each thread's record goes to shared memory first; after the guard the block writes its records in consecutive elements",
        "extern __shared__ float4 gi_stage_area[];",
        "const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item"};
    std::string offset;  // bytes before the buffer's records
    for (const StagedStore* b : staged) {
      const std::string bytes = std::to_string(b->components * b->element_bytes);
      const std::string at = offset.empty() ? "gi_stage_area" : "reinterpret_cast<unsigned char*>(gi_stage_area) + " + offset;
      open.push_back(b->element + "* gi_stage_" + b->buffer + " = reinterpret_cast<" + b->element + "*>(" + at + ");  // " +
                     std::to_string(b->components) + " a thread");
      // The next buffer starts at a 16-byte boundary (a float4's alignment).
      offset += (offset.empty() ? "" : " + ") + std::string("(") + bytes + "u * blockDim.x + 15u) / 16u * 16u";
    }
    std::vector<std::string> close = {
        "__syncthreads();  // gi stage: every record of the block is in shared memory",
        "{",
        "    long long gi_items = (long long)(" + sites.region.bound + ") - gi_stage_first;  // the block's items below the guard's bound",
        "    if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;"};
    for (const StagedStore* b : staged) {
      const std::string k = std::to_string(b->components);
      close.push_back("    for (int gi_j = threadIdx.x; gi_j < " + k + " * (int)gi_items; gi_j += blockDim.x)");
      close.push_back("        " + b->buffer + "[" + k + " * gi_stage_first + gi_j] = gi_stage_" + b->buffer + "[gi_j];");
    }
    close.push_back("}");
    // (The rule's own indentation comes before the first line.)
    s.rules[sites.region.first_rule].line_before_wraps[name()] = edits::joined(open, indent);
    s.rules[sites.after_rule].line_before[name()] = indent + edits::joined(close, indent);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::StageFamily)

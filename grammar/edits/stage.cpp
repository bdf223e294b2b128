// stage: `stage:p` moves each thread's record of K consecutive elements of
// the buffer p (the sites of grammar/edits/staged_records.hpp) through
// shared memory, so the block's records cross global memory in consecutive
// elements and each warp instruction fills whole memory segments instead
// of touching K times as many (issue 28's fourth family, coalescing: the
// jacobian field's 9 floats a voxel reach a third of the time on an H200).
// A written buffer's records go to shared memory first; after the guard the
// block meets at one barrier and copies them out. A read buffer's records
// are copied in by the block before the guard, then one barrier, and each
// thread reads its own from shared memory.
//
//     extern __shared__ float4 gi_stage_area[];
//     const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;
//     float* gi_stage_out = reinterpret_cast<float*>(gi_stage_area);
//     (a read buffer: the block's K * items elements into its copy; __syncthreads();)
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
#include "grammar/edits/staged_records.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

const StagedRecord* site_named(const StagedRecords& sites, const std::string& buffer) {
  for (const StagedRecord& s : sites.sites)
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
    return "stage:P (P: a buffer each thread writes or reads as a record of K consecutive elements, P[K * tid + c])";
  }

  void parse(ArgumentReader& r, Edit& e) const override { e.literal = r.identifier(); }
  std::string print(const Edit& e) const override { return "stage:" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const StagedRecords sites = find_staged_records(g, context);
    if (site_named(sites, e.literal)) return std::nullopt;
    for (const std::string& why : sites.refusals)
      if (why.find("'" + e.literal + "'") != std::string::npos) return "no stage site '" + e.literal + "': " + why;
    return "no stage site '" + e.literal + "' in " + g.file_name() + ": " +
           (!sites.kernel_problem.empty() ? sites.kernel_problem
                                          : "it is not written or read as records of consecutive elements, P[K * tid + c]");
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const StagedRecord& s : find_staged_records(g, context).sites) out.push_back(Edit{name(), "", "", 0, 0, s.buffer});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return find_staged_records(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const StagedRecords sites = find_staged_records(g, context);
    const StagedRecord& site = *site_named(sites, e.literal);
    s.launch.staged[site.buffer] = static_cast<unsigned>(site.components) * site.element_bytes;
    for (std::size_t rule : site.rules) {
      const std::string buffer = site.buffer;
      const int k = site.components;
      s.rules[rule].rewrites[name() + " " + buffer] = [buffer, k](const std::string& text) { return staged_text(text, buffer, k); };
    }
    // Every staged buffer's declarations and copy-out, remade from all of them.
    std::vector<const StagedRecord*> staged;
    for (const auto& [buffer, bytes] : s.launch.staged) staged.push_back(site_named(sites, buffer));
    const std::string indent = edits::indentation_of(g.rule(sites.region.first_rule).text);
    std::vector<std::string> open = {
        "// gi stage: the threads' records pass through shared memory; the block moves them to and from global memory in consecutive elements",
        "extern __shared__ float4 gi_stage_area[];",
        "const long long gi_stage_first = (long long)blockIdx.x * blockDim.x;  // the block's first item"};
    std::string offset;  // bytes before the buffer's records
    for (const StagedRecord* b : staged) {
      const std::string bytes = std::to_string(b->components * b->element_bytes);
      const std::string at = offset.empty() ? "gi_stage_area" : "reinterpret_cast<unsigned char*>(gi_stage_area) + " + offset;
      open.push_back(b->element + "* gi_stage_" + b->buffer + " = reinterpret_cast<" + b->element + "*>(" + at + ");  // " +
                     std::to_string(b->components) + " a thread");
      // The next buffer starts at a 16-byte boundary (a float4's alignment).
      offset += (offset.empty() ? "" : " + ") + std::string("(") + bytes + "u * blockDim.x + 15u) / 16u * 16u";
    }
    // The block's records cross global memory: read ones before the guard,
    // written ones after it.
    const auto copies = [&](bool load) {
      std::vector<std::string> lines = {
          "{",
          "    long long gi_items = (long long)(" + sites.region.bound + ") - gi_stage_first;  // the block's items below the guard's bound",
          "    if (gi_items > (long long)blockDim.x) gi_items = blockDim.x;"};
      for (const StagedRecord* b : staged) {
        if (b->load != load) continue;
        const std::string k = std::to_string(b->components);
        const std::string global = b->buffer + "[" + k + " * gi_stage_first + gi_j]", shared = "gi_stage_" + b->buffer + "[gi_j]";
        lines.push_back("    for (int gi_j = threadIdx.x; gi_j < " + k + " * (int)gi_items; gi_j += blockDim.x)");
        lines.push_back("        " + (load ? shared + " = " + global : global + " = " + shared) + ";");
      }
      lines.push_back("}");
      return lines.size() > 4 ? lines : std::vector<std::string>{};
    };
    std::vector<std::string> in = copies(true), out = copies(false);
    if (!in.empty()) in.push_back("__syncthreads();  // gi stage: every record the block reads is in shared memory");
    if (!out.empty()) out.insert(out.begin(), "__syncthreads();  // gi stage: every record of the block is in shared memory");
    // A rule's own indentation comes before the first line put before it;
    // the rest are indented as the kernel's body.
    const auto before = [&](std::size_t rule, const std::vector<std::string>& lines) {
      const std::string own = edits::indentation_of(g.rule(rule).text);
      const std::string first = indent.size() > own.size() ? indent.substr(own.size()) : "";
      return first + edits::joined(lines, indent);
    };
    s.rules[sites.region.first_rule].line_before_wraps[name()] = before(sites.region.first_rule, open);
    if (in.empty()) s.rules[sites.guard_rule].line_before.erase(name());
    else s.rules[sites.guard_rule].line_before[name()] = before(sites.guard_rule, in);
    if (out.empty()) s.rules[sites.after_rule].line_before.erase(name());
    else s.rules[sites.after_rule].line_before[name()] = before(sites.after_rule, out);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::StageFamily)

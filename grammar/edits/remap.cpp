// remap: `remap:xy` (or xz, yz) trades two thread axes of the entry kernel:
// every threadIdx, blockIdx, blockDim and gridDim member of one axis in the
// kernel's text becomes the other's, and the launch gives each axis the
// blocks the other's threads need (LaunchEffect::swap_axes,
// fitness/workload/workload_plan.cpp). A kernel written as one writes
// a[i][j], the row i from the x thread index, then has neighbouring lanes
// on neighbouring columns: coalesced loads where a warp's were a row apart
// (Fan et al.'s "which index walks fastest"; issue 28's fourth family).
// Legality (analysis/remap_sites.hpp): both axes guarded, no warp-level
// code, shared memory or barrier, no helper reading a thread index.
// Composes with line and CUDA edits, coarsen and merge_runs (a thread's own
// work, renamed with the rest); not with the families whose warps and
// block-wide loops walk x (grammar/patch_apply.cpp: check_remap_composes).
#include "analysis/remap_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class RemapFamily : public EditFamily {
 public:
  std::string name() const override { return "remap"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override { return "remap:xy|xz|yz (the two thread axes the kernel trades)"; }

  void parse(ArgumentReader& r, Edit& e) const override { e.literal = r.one_of({"xy", "xz", "yz"}); }
  std::string print(const Edit& e) const override { return "remap:" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const analysis::RemapSites sites = analysis::find_remap_sites(g.parsed(), context.entry);
    for (const std::string& pair : sites.pairs)
      if (pair == e.literal) return std::nullopt;
    std::string why = sites.refusals.empty() ? "it is no kernel whose two thread axes are guarded global indices" : sites.refusals.front();
    return "no remap:" + e.literal + " site in " + g.file_name() + ": " + why;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const std::string& pair : analysis::find_remap_sites(g.parsed(), context.entry).pairs)
      out.push_back(Edit{name(), "", "", 0, 0, pair});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return analysis::find_remap_sites(g.parsed(), context.entry).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const analysis::RemapSites sites = analysis::find_remap_sites(g.parsed(), context.entry);
    const std::string pair = e.literal;
    s.function_rewrites[name()] = FunctionRewrite{
        sites.kernel, [pair](const std::string& text) { return analysis::swap_thread_axes(text, pair); }};
    s.launch.swap_axes = pair;
    // Said once, above the kernel's header (file level: not renamed).
    const int header = g.parsed().functions[static_cast<std::size_t>(sites.kernel)].header_element;
    const std::string axes = std::string(1, pair[0]) + " and " + pair[1];
    s.rules[g.rule_of_element(static_cast<std::size_t>(header))].line_before[name()] =
        "// gi remap:" + pair + ": the thread axes " + axes + " trade places, and the launch's grid extents with them";
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::RemapFamily)

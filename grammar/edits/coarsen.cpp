// coarsen: `coarsen:K[,consecutive|strided]` makes each thread handle K work
// items (thread coarsening, Magni et al.; HIPAcc's pixels per thread) and
// shrinks the grid's x extent K times. It needs no hand-written code, so it
// applies to a user's kernel as well as the library's: any kernel whose work
// is guarded the usual way,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;
//     ...
//     if (tid < N) { ... }
// gets a loop from the index line to the end of the guard's if statement,
// with tid = (blockIdx.x * blockDim.x + threadIdx.x) * K + gi_item
// (consecutive items, the default) or
// tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x
// (strided: neighbouring threads keep neighbouring items).
// Not where the loop would change what the kernel means: a `return` or a
// barrier inside the region, shared memory, or blockIdx used elsewhere.
// In a seed with switches only the path its default setting compiles counts
// (the plain kernel); a patch that also switches that path off is rejected
// (grammar/patch_apply.cpp), since its loop would wrap dead code.
#include <variant>

#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"
#include "grammar/edits/work_item_region.hpp"

namespace gi::grammar {
namespace {

class CoarsenFamily : public EditFamily {
 public:
  std::string name() const override { return "coarsen"; }
  EditGroup group() const override { return EditGroup::Structural; }
  std::string syntax() const override { return "coarsen:K[,consecutive|strided] (K: 2..64)"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.value = r.integer();
    e.literal = r.accept(',') ? r.one_of({"consecutive", "strided"}) : "consecutive";
  }
  std::string print(const Edit& e) const override {
    return "coarsen:" + std::to_string(e.value) + (e.literal == "strided" ? ",strided" : "");
  }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.value < 2 || e.value > 64) return "coarsening factor must be 2..64";
    if (e.literal != "consecutive" && e.literal != "strided") return "item order must be consecutive or strided";
    const auto site = find_work_item_region(g, context);
    if (const auto* why = std::get_if<std::string>(&site)) return "no coarsening site in " + g.file_name() + ": " + *why;
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    if (!std::holds_alternative<WorkItemRegion>(find_work_item_region(g, context))) return out;
    for (int k : context.coarsen_factors)
      for (const char* order : {"consecutive", "strided"}) out.push_back(Edit{name(), "", "", k, 0, order});
    return out;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const WorkItemRegion site = std::get<WorkItemRegion>(find_work_item_region(g, context));
    const std::string k = std::to_string(e.value);
    const std::string index = site.index_text;
    const std::string coarse = e.literal == "strided"
                                   ? index + " + " + kItemCounter + " * gridDim.x * blockDim.x"
                                   : "(" + index + ") * " + k + " + " + kItemCounter;
    // The index line as it stands in the variant (another edit may have
    // replaced it: then its text has no index expression and stays).
    s.rules[site.first_rule].rewrites[name()] = [index, coarse](const std::string& text) {
      const std::size_t at = text.find(index);
      return at == std::string::npos ? text : text.substr(0, at) + coarse + text.substr(at + index.size());
    };
    s.wraps["coarsen"] = Wrap{site.first_rule, site.last_rule,
                  {"for (int " + std::string(kItemCounter) + " = 0; " + kItemCounter + " < " + k + "; " + kItemCounter + "++) {"}, {"}"}};
    s.launch.coarsen = e.value;
    s.launch.grid_threads = 0;  // its loop replaces a grid-stride loop of privatise (same wrap)
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::CoarsenFamily)

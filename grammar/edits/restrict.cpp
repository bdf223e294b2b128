// restrict: `restrict:NAME` qualifies a pointer parameter of the kernel
// __restrict__ (no other pointer aliases it), which lets the compiler keep
// loads in registers and use the read-only path.
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class RestrictFamily : public EditFamily {
 public:
  std::string name() const override { return "restrict"; }
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return "restrict:PARAMETER"; }

  void parse(ArgumentReader& r, Edit& e) const override { e.target = r.identifier(); }
  std::string print(const Edit& e) const override { return "restrict:" + e.target; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const Param* p = kernel_param(g, e.target);
    if (!p) return "no kernel parameter named " + e.target;
    if (!p->pointer) return "kernel parameter " + e.target + " is not a pointer";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext&) const override {
    std::vector<Edit> out;
    for (const auto& f : g.parsed().functions)
      if (f.is_kernel)
        for (const auto& p : f.params)
          if (p.pointer && !p.restrict_qualified) out.push_back(Edit{name(), p.name, "", 0, 0, ""});
    return out;
  }

  void apply(const Grammar&, const EditContext&, const Edit& e, PatchState& s) const override {
    s.header.restrict_params.insert(e.target);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::RestrictFamily)

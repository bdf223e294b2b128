// const: `const:NAME=5` specialises a scalar parameter the kernel never
// assigns to a compile-time constant (the launch signature is kept: the
// parameter is renamed and a constexpr of its name starts the body). Random
// edits use the workload's values (EditContext::constants).
#include "grammar/cuda_rewrites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class ConstFamily : public EditFamily {
 public:
  std::string name() const override { return "const"; }
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return "const:PARAMETER=NUMBER"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.identifier();
    r.expect('=');
    e.literal = r.literal();
  }
  std::string print(const Edit& e) const override { return "const:" + e.target + "=" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const Param* p = kernel_param(g, e.target);
    if (!p) return "no kernel parameter named " + e.target;
    if (!specialisable(*p)) return "kernel parameter " + e.target + " is not a scalar that the kernel never assigns";
    if (!constant_literal(*p, e.literal)) return "'" + e.literal + "' is not a " + p->base_type + " literal";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& f : g.parsed().functions)
      if (f.is_kernel)
        for (const auto& p : f.params)
          if (specialisable(p))
            if (const auto it = context.constants.find(p.name); it != context.constants.end())
              out.push_back(Edit{name(), p.name, "", 0, 0, it->second});
    return out;
  }

  void apply(const Grammar&, const EditContext&, const Edit& e, PatchState& s) const override {
    s.header.constants[e.target] = e.literal;
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::ConstFamily)

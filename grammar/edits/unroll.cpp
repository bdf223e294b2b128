// unroll: `unroll:<for_k.cu_40>=4` puts `#pragma unroll 4` before the loop
// (=-1: `#pragma unroll`, full unrolling; =0: no pragma). A pragma the seed
// had right before that loop is taken over.
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

// The pragma rule directly before a loop, which an unroll edit takes over.
std::optional<std::size_t> pragma_before(const Grammar& g, std::size_t for_rule) {
  for (std::size_t i = for_rule; i-- > 0;) {
    const Rule& r = g.rule(i);
    if (r.kind == RuleKind::Pragma) return i;
    if (r.text.find_first_not_of(" \t") != std::string::npos) return std::nullopt;
  }
  return std::nullopt;
}

class UnrollFamily : public EditFamily {
 public:
  std::string name() const override { return "unroll"; }
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return "unroll:<for_k.cu_N>=F (F: -1 full, 0 none, 1..64)"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.value = r.integer();
  }
  std::string print(const Edit& e) const override { return "unroll:" + e.target + "=" + std::to_string(e.value); }

  std::optional<std::string> problem(const Grammar& g, const EditContext&, const Edit& e) const override {
    const auto t = edits::named_rule(g, e.target);
    if (!t) return "unknown rule " + e.target;
    if (t->sub || g.rule(t->index).kind != RuleKind::For) return e.target + " is not a for loop header";
    if (e.value < -1 || e.value > 64) return "unroll factor must be -1 (full), 0 (none) or 1..64";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (std::size_t i = 0; i < g.rules().size(); ++i)
      if (g.rule(i).kind == RuleKind::For)
        for (int f : context.unroll_factors) out.push_back(Edit{name(), g.rule_name(i), "", f, 0, ""});
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& s) const override {
    const std::size_t loop = *g.find(e.target);
    if (const auto p = pragma_before(g, loop)) s.rules[*p].dropped = true;
    auto& before = s.rules[loop].line_before;
    if (e.value == 0) before.erase(name());
    else before[name()] = e.value < 0 ? "#pragma unroll" : "#pragma unroll " + std::to_string(e.value);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::UnrollFamily)

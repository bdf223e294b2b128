// define: `define:NAME=VALUE` sets a switch of the seed (grammar/switches.hpp):
// the value of its `#define NAME VALUE` line, chosen from the values its
// spec.json lists. This is how GI picks among a seed's alternative code paths
// (`#if NAME == 1`) and their parameters (items per thread), per GPU, while
// line edits reach the lines of every path.
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

class DefineFamily : public EditFamily {
 public:
  std::string name() const override { return "define"; }
  EditGroup group() const override { return EditGroup::Switch; }
  std::string syntax() const override { return "define:SWITCH=VALUE"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.identifier();
    r.expect('=');
    e.literal = r.literal();
  }
  std::string print(const Edit& e) const override { return "define:" + e.target + "=" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    const SwitchDef* s = context.find_switch(e.target);
    if (!s) {
      std::string known;
      for (const SwitchDef& d : context.switches) known += (known.empty() ? "" : ", ") + d.name;
      return "no switch named " + e.target + " (the seed's spec declares " + (known.empty() ? "none" : known) + ")";
    }
    if (!find_switch_line(g, e.target)) return "switch " + e.target + " has no `#define " + e.target + " VALUE` line in " + g.file_name();
    for (const std::string& v : s->values)
      if (v == e.literal) return std::nullopt;
    std::string values;
    for (const std::string& v : s->values) values += (values.empty() ? "" : ", ") + v;
    return "'" + e.literal + "' is not a value of switch " + e.target + " (values: " + values + ")";
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const SwitchDef& s : context.switches) {
      const auto line = find_switch_line(g, s.name);
      if (!line) continue;
      for (const std::string& v : s.values)
        if (v != line->value) out.push_back(Edit{name(), s.name, "", 0, 0, v});
    }
    return out;
  }

  void apply(const Grammar& g, const EditContext&, const Edit& e, PatchState& s) const override {
    const SwitchLine line = *find_switch_line(g, e.target);
    const std::string& text = g.rule(line.rule).text;
    s.rules[line.rule].text = text.substr(0, line.value_offset) + e.literal + text.substr(line.value_offset + line.value_length);
    s.launch.switches[e.target] = e.literal;
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::DefineFamily)

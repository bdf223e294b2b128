#include "gi/search/edit_operators.hpp"

#include <stdexcept>

#include "grammar/edit_family.hpp"
#include "grammar/switches.hpp"

namespace gi {
using grammar::Edit;

std::set<std::string> parse_families(const std::string& list) {
  const std::vector<std::string> names = grammar::parse_family_list(list);
  return {names.begin(), names.end()};
}

EditOperators::EditOperators(const grammar::Grammar& g, OperatorConfig config) : g_(g), config_(std::move(config)) {
  for (const grammar::EditFamily* f : grammar::edit_families()) {
    if (!config_.enabled.empty() && !config_.enabled.count(f->name())) continue;
    std::vector<Edit> edits = f->candidates(g_, config_.context);
    if (edits.empty()) continue;
    available_.push_back(f->name());
    candidates_.push_back(std::move(edits));
  }
}

namespace {
template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}
}  // namespace

Edit EditOperators::random_edit(const std::string& family, std::mt19937_64& rng) const {
  for (std::size_t i = 0; i < available_.size(); ++i)
    if (available_[i] == family) return pick(candidates_[i], rng);
  throw std::runtime_error("edit family '" + family + "' has no legal edit in " + g_.file_name() +
                           " (or is switched off)");
}

Edit EditOperators::random_edit(std::mt19937_64& rng) const {
  if (available_.empty()) throw std::runtime_error("no edit family is enabled that has a site in " + g_.file_name());
  const std::size_t f = std::uniform_int_distribution<std::size_t>(0, available_.size() - 1)(rng);
  return pick(candidates_[f], rng);
}

void EditOperators::append_random_edit(grammar::Patch& patch, std::mt19937_64& rng) const {
  const Edit edit = random_edit(rng);
  patch.edits.push_back(edit);
  if (edit.family != "define" || config_.context.switch_combinations.empty()) return;
  std::map<std::string, std::string> setting = grammar::switch_values(g_, config_.context);
  for (const Edit& e : patch.edits)
    if (e.family == "define") setting[e.target] = e.literal;
  const auto allowed = grammar::nearest_allowed_setting(config_.context, setting, edit.target);
  if (!allowed) return;  // the evaluator rejects it, naming the setting
  for (const auto& [name, value] : *allowed)
    if (setting[name] != value) patch.edits.push_back(Edit{"define", name, "", 0, 0, value});
}

std::vector<Edit> EditOperators::alternatives(const Edit& edit) const {
  const grammar::EditFamily* family = grammar::find_edit_family(edit.family);
  if (!family || family->group() == grammar::EditGroup::Line) return {};
  std::vector<Edit> out;
  for (std::size_t i = 0; i < available_.size(); ++i) {
    if (available_[i] != edit.family) continue;
    for (const Edit& e : candidates_[i])
      if (e.target == edit.target && !(e == edit)) out.push_back(e);
  }
  return out;
}

}  // namespace gi

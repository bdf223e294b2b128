#include "gi/edit_operators.hpp"

#include <stdexcept>

namespace gi {
using grammar::Edit;
using grammar::EditType;

std::set<EditType> parse_families(const std::string& list) {
  std::set<EditType> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    if (name == "all") {
      out.insert(grammar::all_edit_types().begin(), grammar::all_edit_types().end());
      continue;
    }
    bool found = false;
    for (EditType t : grammar::all_edit_types())
      if (grammar::edit_family(t) == name) {
        out.insert(t);
        found = true;
      }
    if (!found)
      throw std::runtime_error("unknown edit family '" + name +
                               "': expected delete, replace, insert, unroll, ldg, fastmath, restrict, launch_bounds, const or all");
  }
  return out;
}

EditOperators::EditOperators(const grammar::Grammar& g, OperatorConfig config)
    : g_(g), config_(std::move(config)), sites_(grammar::find_edit_sites(g)) {
  deletable_ = sites_.statements;
  deletable_.insert(deletable_.end(), sites_.pragmas.begin(), sites_.pragmas.end());
  // Legal pairs are enumerated once, so every draw is legal and uniform.
  for (std::size_t t : sites_.statements)
    for (std::size_t s : sites_.statements)
      if (grammar::can_replace_statement(g, t, s)) replacements_.emplace_back(t, s);
  for (std::size_t t : sites_.conditions)
    for (std::size_t s : sites_.conditions)
      if (grammar::can_replace_condition(g, t, s)) replacements_.emplace_back(t, s);
  for (std::size_t t : sites_.types)
    for (std::size_t s : sites_.types)
      if (t != s && g.context(t).type_class == g.context(s).type_class &&
          g.rule(t).sub_text() != g.rule(s).sub_text())
        replacements_.emplace_back(t, s);
  for (std::size_t t : sites_.pragmas)
    for (std::size_t s : sites_.pragmas)
      if (t != s && g.rule(t).text != g.rule(s).text) replacements_.emplace_back(t, s);
  for (std::size_t a : sites_.anchors)
    for (std::size_t s : sites_.statements)
      if (grammar::can_insert_after(g, a, s)) insertions_.emplace_back(a, s);
  for (const auto& p : sites_.const_params)
    if (config_.constants.count(p.name)) const_params_.push_back(p.name);

  for (EditType t : grammar::all_edit_types()) {
    if (!config_.enabled.count(t)) continue;
    bool has = false;
    switch (t) {
      case EditType::Delete: has = !deletable_.empty(); break;
      case EditType::Replace: has = !replacements_.empty(); break;
      case EditType::Insert: has = !insertions_.empty(); break;
      case EditType::Unroll: has = !sites_.for_loops.empty(); break;
      case EditType::Ldg: has = !sites_.ldg_rules.empty(); break;
      case EditType::FastMath: has = !sites_.fastmath_rules.empty(); break;
      case EditType::Restrict: has = !sites_.restrict_params.empty(); break;
      case EditType::LaunchBounds: has = true; break;
      case EditType::Const: has = !const_params_.empty(); break;
    }
    if (has) available_.push_back(t);
  }
}

namespace {
template <class T>
const T& pick(const std::vector<T>& v, std::mt19937_64& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}
}  // namespace

std::optional<Edit> EditOperators::random_edit(EditType type, std::mt19937_64& rng) const {
  Edit e;
  e.type = type;
  auto name_of = [&](std::size_t rule, bool sub) { return sub ? g_.sub_name(rule) : g_.rule_name(rule); };
  switch (type) {
    case EditType::Delete:
      if (deletable_.empty()) return std::nullopt;
      e.target = g_.rule_name(pick(deletable_, rng));
      return e;
    case EditType::Replace: {
      if (replacements_.empty()) return std::nullopt;
      const auto [t, s] = pick(replacements_, rng);
      const bool sub = g_.rule(t).sub_kind != grammar::SubKind::None;
      e.target = name_of(t, sub);
      e.source = name_of(s, sub);
      return e;
    }
    case EditType::Insert: {
      if (insertions_.empty()) return std::nullopt;
      const auto [a, s] = pick(insertions_, rng);
      e.target = g_.rule_name(a);
      e.source = g_.rule_name(s);
      return e;
    }
    case EditType::Unroll:
      if (sites_.for_loops.empty()) return std::nullopt;
      e.target = g_.rule_name(pick(sites_.for_loops, rng));
      e.value = pick(config_.unroll_factors, rng);
      return e;
    case EditType::Ldg:
      if (sites_.ldg_rules.empty()) return std::nullopt;
      e.target = g_.rule_name(pick(sites_.ldg_rules, rng));
      return e;
    case EditType::FastMath:
      if (sites_.fastmath_rules.empty()) return std::nullopt;
      e.target = g_.rule_name(pick(sites_.fastmath_rules, rng));
      return e;
    case EditType::Restrict:
      if (sites_.restrict_params.empty()) return std::nullopt;
      e.target = pick(sites_.restrict_params, rng);
      return e;
    case EditType::LaunchBounds:
      e.value = pick(config_.launch_bound_threads, rng);
      e.value2 = pick(config_.launch_bound_blocks, rng);
      return e;
    case EditType::Const:
      if (const_params_.empty()) return std::nullopt;
      e.target = pick(const_params_, rng);
      e.literal = config_.constants.at(e.target);
      return e;
  }
  return std::nullopt;
}

Edit EditOperators::random_edit(std::mt19937_64& rng) const {
  if (available_.empty()) throw std::runtime_error("no edit family is enabled that has a site in " + g_.file_name());
  return *random_edit(pick(available_, rng), rng);
}

}  // namespace gi

#include "grammar/edits/atomic_site_edit.hpp"

#include "grammar/switches.hpp"

namespace gi::grammar::edits {

std::function<bool(std::size_t)> live_tokens(const Grammar& g, const EditContext& context) {
  std::vector<bool> live_line = live_lines(g.source(), switch_values(g, context), g.file_name());
  return [&k = g.parsed(), live_line = std::move(live_line)](std::size_t t) {
    const int line = k.tokens[t].line;
    return line <= 0 || static_cast<std::size_t>(line) >= live_line.size() || live_line[static_cast<std::size_t>(line)];
  };
}

const analysis::AggregateSite* site_at(const Grammar& g, const analysis::AggregateSites& sites, std::size_t rule) {
  for (const auto& s : sites.sites)
    if (g.rule_of_element(s.element) == rule) return &s;
  return nullptr;
}

std::string why_no_site(const Grammar& g, const analysis::AggregateSites& sites, std::size_t rule,
                        const std::string& target, const std::string& family) {
  const std::string at = "line " + std::to_string(g.rule(rule).first_line) + ":";
  for (const std::string& refusal : sites.refusals)
    if (refusal.rfind(at, 0) == 0) return "no " + family + " site: " + refusal;
  return target + " is not an atomic statement";
}

std::string indentation_of(const std::string& text) { return text.substr(0, text.find_first_not_of(" \t")); }

std::string joined(const std::vector<std::string>& lines, const std::string& indent) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + indent : std::string()) + lines[i];
  return out;
}

std::string combine(const std::string& kind, const std::string& into, const std::string& value) {
  if (kind == "add") return into + " += " + value + ";";
  if (kind == "and") return into + " &= " + value + ";";
  if (kind == "or") return into + " |= " + value + ";";
  if (kind == "xor") return into + " ^= " + value + ";";
  return "if (" + value + (kind == "min" ? " < " : " > ") + into + ") " + into + " = " + value + ";";
}

std::string combine_value(const analysis::AggregateSite& site, const std::string& into) {
  const std::string& kind = site.operation.kind;
  const std::string value = "(" + site.type + ")(" + site.value + ")";
  if (kind == "add" || kind == "and" || kind == "or" || kind == "xor") return combine(kind, into, value);
  // min and max name the value twice: evaluate it once.
  return "{ const " + site.type + " gi_value = " + value + "; " + combine(kind, into, "gi_value") + " }";
}

void keep_every_thread_to_the_end(const Grammar& g, const analysis::AggregateSite& site, PatchState& s) {
  for (std::size_t r : site.trailing_returns) s.rules[g.rule_of_element(r)].dropped = true;
  if (!site.exit) return;
  const std::size_t close = g.rule_of_element(site.body_close_element);
  const std::size_t exit_first = g.rule_of_element(site.exit->first_element);
  const std::size_t exit_last = g.rule_of_element(site.exit->last_element);
  for (std::size_t r = exit_first; r <= exit_last; ++r) s.rules[r].dropped = true;
  // The predicate opens at the next line with code (its indentation is that line's).
  std::size_t from = exit_last + 1;
  while (from < close && g.rule(from).text.find_first_not_of(" \t") == std::string::npos) ++from;
  if (from < close) s.wraps[kEarlyExitWrap] = Wrap{from, close - 1, {"if (!(" + site.exit->condition + ")) {"}, {"}"}};
}

}  // namespace gi::grammar::edits

#include "grammar/patch_apply.hpp"

#include <map>
#include <set>

#include "grammar/cuda_rewrites.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/unified_diff.hpp"

namespace gi::grammar {
namespace {

std::string indentation(const std::string& text) {
  return text.substr(0, text.find_first_not_of(" \t"));
}

// Moves a copied rule to a new indentation, keeping its lines' relative layout.
std::string reindent(const std::string& text, const std::string& indent) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::size_t common = std::string::npos;
  for (const auto& l : lines) {
    const std::size_t first = l.find_first_not_of(" \t");
    if (first != std::string::npos) common = std::min(common, first);
  }
  if (common == std::string::npos) common = 0;
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += indent + (lines[i].size() >= common ? lines[i].substr(common) : std::string());
  }
  return out;
}

struct PatchState {
  std::vector<bool> deleted;
  std::vector<std::optional<std::size_t>> replaced_by;
  std::vector<std::optional<std::string>> sub_text;
  std::vector<std::vector<std::size_t>> inserts;
  std::map<std::size_t, int> unroll;
  std::set<std::size_t> ldg, fastmath;
  HeaderEdits header;
};

PatchState collect(const Grammar& g, const Patch& patch) {
  const std::size_t n = g.rules().size();
  PatchState s{std::vector<bool>(n, false), std::vector<std::optional<std::size_t>>(n),
               std::vector<std::optional<std::string>>(n), std::vector<std::vector<std::size_t>>(n),
               {}, {}, {}, {}};
  // The patch was validated, so every rule name resolves; parameters and
  // launch bounds carry no rule.
  auto index = [&](const std::string& name, bool* sub = nullptr) { return g.find(name, sub).value_or(0); };
  for (const auto& e : patch.edits) {
    bool sub = false;
    switch (e.type) {
      case EditType::Delete:
        s.deleted[index(e.target)] = true;
        s.replaced_by[index(e.target)].reset();
        break;
      case EditType::Replace: {
        const std::size_t t = index(e.target, &sub);
        const std::size_t src = index(e.source);
        if (sub) {
          s.sub_text[t] = g.rule(src).sub_text();
        } else {
          s.deleted[t] = false;
          s.replaced_by[t] = src;
        }
        break;
      }
      case EditType::Insert: s.inserts[index(e.target)].push_back(index(e.source)); break;
      case EditType::Unroll: s.unroll[index(e.target)] = e.value; break;
      case EditType::Ldg: s.ldg.insert(index(e.target)); break;
      case EditType::FastMath: s.fastmath.insert(index(e.target)); break;
      case EditType::Restrict: s.header.restrict_params.insert(e.target); break;
      case EditType::LaunchBounds: s.header.launch_bounds = std::make_pair(e.value, e.value2); break;
      case EditType::Const: s.header.constants[e.target] = e.literal; break;
    }
  }
  return s;
}

// The pragma rule directly before a loop, which an unroll edit takes over.
std::optional<std::size_t> pragma_before(const Grammar& g, std::size_t for_rule) {
  for (std::size_t i = for_rule; i-- > 0;) {
    const Rule& r = g.rule(i);
    if (r.kind == RuleKind::Pragma) return i;
    if (r.text.find_first_not_of(" \t") != std::string::npos) return std::nullopt;
  }
  return std::nullopt;
}

// Indentation for lines placed right after rule i: that of the next
// non-blank line when it is deeper (the body of a header), else i's own,
// one level deeper after an opening brace.
std::string inner_indentation(const Grammar& g, std::size_t i) {
  const std::string& text = g.rule(i).text;
  const std::string own = indentation(text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
  const bool opens = !text.empty() && text.back() == '{';
  for (std::size_t j = i + 1; j < g.rules().size(); ++j) {
    const std::string& next = g.rule(j).text;
    if (next.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string deeper = indentation(next);
    if (opens && deeper.size() > own.size()) return deeper;
    break;
  }
  return opens ? own + "    " : indentation(text);
}

}  // namespace

void validate_patch(const Grammar& g, const Patch& patch) {
  for (std::size_t i = 0; i < patch.edits.size(); ++i)
    if (auto problem = edit_problem(g, patch.edits[i]))
      throw PatchError("edit " + std::to_string(i + 1) + " '" + to_string(patch.edits[i]) + "': " + *problem);
}

std::string apply_patch(const Grammar& g, const Patch& patch) {
  validate_patch(g, patch);
  PatchState s = collect(g, patch);
  std::set<std::size_t> taken_pragmas;
  for (const auto& [loop, factor] : s.unroll)
    if (auto p = pragma_before(g, loop)) taken_pragmas.insert(*p);

  std::vector<std::string> out;
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const Rule& r = g.rule(i);
    const RuleContext& c = g.context(i);
    const std::string indent = indentation(r.text);
    if (const auto u = s.unroll.find(i); u != s.unroll.end() && u->second != 0)
      out.push_back(indent + (u->second < 0 ? "#pragma unroll" : "#pragma unroll " + std::to_string(u->second)));
    std::optional<std::string> text = r.text;
    if (s.deleted[i] || taken_pragmas.count(i)) {
      // A brace-less body cannot vanish: the header would swallow the next line.
      text = c.braceless_body ? std::optional<std::string>(indent + ";") : std::nullopt;
    } else if (s.replaced_by[i]) {
      text = reindent(g.rule(*s.replaced_by[i]).text, indent);
    } else if (s.sub_text[i]) {
      text = r.text.substr(0, r.sub.offset) + *s.sub_text[i] + r.text.substr(r.sub.offset + r.sub.length);
    }
    std::vector<std::string> body_lines;
    if (text) {
      if (s.ldg.count(i)) *text = rewrite_ldg(*text, ldg_parameters(g.parsed(), c.function));
      if (s.fastmath.count(i)) *text = rewrite_fastmath(*text);
      if (c.function_header >= 0) *text = rewrite_header(g, i, s.header, body_lines);
      out.push_back(*text);
    }
    const std::string inner = inner_indentation(g, i);
    for (const auto& line : body_lines) out.push_back(inner + line);
    for (std::size_t source : s.inserts[i]) out.push_back(reindent(g.rule(source).text, inner));
  }
  std::string result;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i) result += '\n';
    result += out[i];
  }
  if (g.final_newline()) result += '\n';
  return result;
}

std::string patch_diff(const Grammar& g, const Patch& patch, const std::string& path) {
  return unified_diff(g.source(), apply_patch(g, patch), "a/" + path, "b/" + path);
}

}  // namespace gi::grammar

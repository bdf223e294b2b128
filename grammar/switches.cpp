#include "grammar/switches.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "grammar/preprocessor_conditions.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `#define NAME VALUE ...` -> NAME and VALUE's span, or nothing.
struct DefineParts {
  std::string name;
  std::size_t value_offset = 0, value_length = 0;
};

std::optional<DefineParts> define_parts(std::string_view line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string_view::npos || line[p] != '#') return std::nullopt;
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string_view::npos || line.compare(p, 6, "define") != 0) return std::nullopt;
  p = line.find_first_not_of(" \t", p + 6);
  if (p == std::string_view::npos) return std::nullopt;
  std::size_t e = p;
  while (e < line.size() && ident_char(line[e])) ++e;
  if (e == p || (e < line.size() && line[e] == '(')) return std::nullopt;  // no name, or a function-like macro
  DefineParts d;
  d.name = std::string(line.substr(p, e - p));
  const std::size_t v = line.find_first_not_of(" \t", e);
  if (v == std::string_view::npos || line.compare(v, 2, "//") == 0 || line.compare(v, 2, "/*") == 0) return d;
  std::size_t ve = v;
  while (ve < line.size() && !std::isspace(static_cast<unsigned char>(line[ve]))) ++ve;
  d.value_offset = v;
  d.value_length = ve - v;
  return d;
}

// Source lines, with a directive's backslash continuations joined onto it
// (`lines` keeps the original text of each logical line).
std::vector<std::string> logical_lines(std::string_view source) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= source.size()) {
    std::size_t nl = source.find('\n', start);
    if (nl == std::string_view::npos) nl = source.size();
    std::string line(source.substr(start, nl - start));
    start = nl + 1;
    if (!lines.empty() && !lines.back().empty() && lines.back().back() == '\\' && directive_of(lines.back())) {
      lines.back() += "\n" + line;
      continue;
    }
    lines.push_back(std::move(line));
    if (nl == source.size()) break;
  }
  return lines;
}

bool uses_name(const std::vector<std::string>& lines, std::size_t except, const std::string& name) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == except) continue;
    const std::string& l = lines[i];
    for (std::size_t p = l.find(name); p != std::string::npos; p = l.find(name, p + 1)) {
      const bool starts = p == 0 || !ident_char(l[p - 1]);
      const bool ends = p + name.size() >= l.size() || !ident_char(l[p + name.size()]);
      if (starts && ends) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<SwitchLine> find_switch_line(const Grammar& g, const std::string& name) {
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    if (g.context(i).function >= 0) continue;
    const auto d = define_parts(g.rule(i).text);
    if (!d || d->name != name || d->value_length == 0) continue;
    return SwitchLine{i, d->value_offset, d->value_length, g.rule(i).text.substr(d->value_offset, d->value_length)};
  }
  return std::nullopt;
}

std::map<std::string, std::string> switch_values(const Grammar& g, const EditContext& context) {
  std::map<std::string, std::string> values;
  for (const SwitchDef& s : context.switches)
    if (const auto line = find_switch_line(g, s.name)) values[s.name] = line->value;
  return values;
}

namespace {

struct Resolution {
  std::vector<std::string> lines;  // logical lines (directives with their continuations)
  std::vector<int> first_line;     // each logical line's first source line (1-based)
  std::vector<bool> kept;          // per logical line
};

Resolution resolve(std::string_view source, const std::map<std::string, std::string>& values,
                   const std::string& file_name) {
  Resolution r;
  r.lines = logical_lines(source);
  int line_number = 1;
  for (const std::string& l : r.lines) {
    r.first_line.push_back(line_number);
    for (char c : l) line_number += c == '\n';
    ++line_number;
  }
  r.kept.assign(r.lines.size(), false);
  // A conditional group: whether we decide it, and whether its current branch is kept.
  struct Group {
    bool decided = false;  // its condition read only switches
    bool keep = true;      // the current branch's lines are kept
    bool taken = false;    // some earlier branch was kept
    bool outer = true;     // the enclosing code is kept
    int line = 0;
  };
  std::vector<Group> stack;
  std::vector<std::size_t> defines;  // logical lines of kept switch #defines
  auto kept = [&] { return stack.empty() || (stack.back().outer && stack.back().keep); };
  auto fail = [&](std::size_t i, const std::string& what) { throw SourceError(file_name, r.first_line[i], 1, what); };
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    const std::string& line = r.lines[i];
    const auto d = directive_of(line);
    const std::string k = d ? d->keyword : "";
    if (k == "if" || k == "ifdef" || k == "ifndef") {
      Group grp;
      grp.outer = kept();
      grp.line = static_cast<int>(i);
      std::optional<std::int64_t> v;
      if (k == "if") {
        // A condition of literals alone (`#if 0`) reads no switch: the
        // developer's own, kept as it is (grammar/inactive_text.hpp).
        if (!evaluate_condition(d->rest, {})) v = evaluate_condition(d->rest, values);
      } else {
        std::string n = d->rest;
        n.erase(0, n.find_first_not_of(" \t"));
        n.erase(n.find_last_not_of(" \t") + 1);
        if (values.count(n)) v = k == "ifdef" ? 1 : 0;
      }
      grp.decided = v.has_value();
      grp.keep = !grp.decided || *v != 0;
      grp.taken = grp.decided && *v != 0;
      stack.push_back(grp);
      r.kept[i] = !grp.decided && grp.outer;
      continue;
    }
    if (k == "elif" || k == "else") {
      if (stack.empty()) fail(i, "#" + k + " without #if");
      Group& grp = stack.back();
      if (grp.decided) {
        if (k == "else") {
          grp.keep = !grp.taken;
        } else {
          const auto v = evaluate_condition(d->rest, values);
          if (!v) fail(i, "#elif condition '" + d->rest + "' does not read only switches, but its #if (line " +
                              std::to_string(r.first_line[static_cast<std::size_t>(grp.line)]) + ") did");
          grp.keep = !grp.taken && *v != 0;
        }
        grp.taken = grp.taken || grp.keep;
      } else {
        r.kept[i] = grp.outer;
      }
      continue;
    }
    if (k == "endif") {
      if (stack.empty()) fail(i, "#endif without #if");
      const Group grp = stack.back();
      stack.pop_back();
      r.kept[i] = !grp.decided && grp.outer;
      continue;
    }
    if (!kept()) continue;
    r.kept[i] = true;
    if (k == "define") {
      const auto parts = define_parts(line);
      if (parts && values.count(parts->name)) defines.push_back(i);
    }
  }
  if (!stack.empty())
    fail(static_cast<std::size_t>(stack.back().line), "#if never closed: expected #endif");
  // A switch's #define goes where nothing reads its name any more.
  std::vector<std::string> kept_text;
  std::vector<std::size_t> kept_index;
  for (std::size_t i = 0; i < r.lines.size(); ++i)
    if (r.kept[i]) {
      kept_text.push_back(r.lines[i]);
      kept_index.push_back(i);
    }
  for (std::size_t i : defines) {
    const std::size_t at = static_cast<std::size_t>(
        std::find(kept_index.begin(), kept_index.end(), i) - kept_index.begin());
    if (!uses_name(kept_text, at, define_parts(r.lines[i])->name)) r.kept[i] = false;
  }
  return r;
}

}  // namespace

std::string resolve_switches(std::string_view source, const std::map<std::string, std::string>& values,
                             const std::string& file_name) {
  if (values.empty()) return std::string(source);
  const Resolution r = resolve(source, values, file_name);
  std::string result;
  bool first = true;
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    if (!r.kept[i]) continue;
    if (!first) result += '\n';
    result += r.lines[i];
    first = false;
  }
  // logical_lines keeps a final empty line for a source ending in '\n'.
  return result;
}

std::vector<bool> live_lines(std::string_view source, const std::map<std::string, std::string>& values,
                             const std::string& file_name) {
  const Resolution r = resolve(source, values, file_name);
  std::vector<bool> live(1, false);
  for (std::size_t i = 0; i < r.lines.size(); ++i) {
    const int spans = 1 + static_cast<int>(std::count(r.lines[i].begin(), r.lines[i].end(), '\n'));
    for (int k = 0; k < spans; ++k) live.push_back(r.kept[i]);
  }
  return live;
}

}  // namespace gi::grammar

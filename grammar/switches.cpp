#include "grammar/switches.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

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

// ---- #if expressions over switch values ------------------------------------

// Integer constant expressions of the preprocessor over switch names:
// literals, names, defined(NAME), unary ! ~ - +, binary * / % + - << >> < <=
// > >= == != & ^ | && ||, parentheses. nullopt: it reads something that is
// not a switch (or a switch whose value is no integer): leave it alone.
class ConditionEvaluator {
 public:
  ConditionEvaluator(std::string_view text, const std::map<std::string, std::string>& values)
      : text_(text), values_(values) {}

  std::optional<std::int64_t> evaluate() {
    const auto v = binary(0);
    skip();
    if (!v || at_ != text_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(std::string_view op) {
    skip();
    if (text_.substr(at_, op.size()) != op) return false;
    at_ += op.size();
    return true;
  }
  std::optional<std::string> name() {
    skip();
    const std::size_t start = at_;
    if (at_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      while (at_ < text_.size() && ident_char(text_[at_])) ++at_;
    if (at_ == start) return std::nullopt;
    return std::string(text_.substr(start, at_ - start));
  }
  std::optional<std::int64_t> value_of(const std::string& n) const {
    const auto it = values_.find(n);
    if (it == values_.end()) return std::nullopt;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(it->second, &used, 0);
      if (used != it->second.size()) return std::nullopt;
      return v;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  std::optional<std::int64_t> primary() {
    skip();
    if (take("(")) {
      const auto v = binary(0);
      if (!take(")")) return std::nullopt;
      return v;
    }
    if (take("!")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(!*v) : std::nullopt;
    }
    if (take("~")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(~*v) : std::nullopt;
    }
    if (take("-")) {
      const auto v = primary();
      return v ? std::optional<std::int64_t>(-*v) : std::nullopt;
    }
    if (take("+")) return primary();
    if (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      std::size_t end = at_;
      while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])))) ++end;
      std::string digits(text_.substr(at_, end - at_));
      while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' || digits.back() == 'L'))
        digits.pop_back();
      at_ = end;
      try {
        std::size_t used = 0;
        const long long v = std::stoll(digits, &used, 0);
        if (used != digits.size()) return std::nullopt;
        return v;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    const auto n = name();
    if (!n) return std::nullopt;
    if (*n == "defined") {
      const bool paren = take("(");
      const auto m = name();
      if (!m || (paren && !take(")"))) return std::nullopt;
      if (!values_.count(*m)) return std::nullopt;  // another macro: not ours to decide
      return 1;
    }
    return value_of(*n);
  }

  // Precedence climbing over the binary operators, loosest first.
  std::optional<std::int64_t> binary(int level) {
    static const std::vector<std::vector<std::string_view>> levels = {
        {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(levels.size())) return primary();
    auto left = binary(level + 1);
    while (left) {
      skip();
      std::string_view op;
      for (std::string_view candidate : levels[static_cast<std::size_t>(level)]) {
        // `|` must not take the first half of `||`, nor `&` of `&&`, nor `<` of `<<`.
        if (text_.substr(at_, candidate.size()) != candidate) continue;
        const char next = at_ + candidate.size() < text_.size() ? text_[at_ + candidate.size()] : '\0';
        if (candidate.size() == 1 && (next == candidate[0] || (next == '=' && (candidate == "<" || candidate == ">"))))
          continue;
        op = candidate;
        break;
      }
      if (op.empty()) return left;
      at_ += op.size();
      const auto right = binary(level + 1);
      if (!right) return std::nullopt;
      const std::int64_t a = *left, b = *right;
      if (op == "||") left = (a || b);
      else if (op == "&&") left = (a && b);
      else if (op == "|") left = a | b;
      else if (op == "^") left = a ^ b;
      else if (op == "&") left = a & b;
      else if (op == "==") left = (a == b);
      else if (op == "!=") left = (a != b);
      else if (op == "<=") left = (a <= b);
      else if (op == ">=") left = (a >= b);
      else if (op == "<") left = (a < b);
      else if (op == ">") left = (a > b);
      else if (op == "<<") left = b < 0 || b > 62 ? std::optional<std::int64_t>() : std::optional<std::int64_t>(a << b);
      else if (op == ">>") left = b < 0 || b > 62 ? std::optional<std::int64_t>() : std::optional<std::int64_t>(a >> b);
      else if (op == "+") left = a + b;
      else if (op == "-") left = a - b;
      else if (op == "*") left = a * b;
      else if (b == 0) left = std::nullopt;
      else if (op == "/") left = a / b;
      else left = a % b;
    }
    return left;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  const std::map<std::string, std::string>& values_;
};

// A directive line: its keyword ("if", "elif", ...) and the rest without comments.
struct Directive {
  std::string keyword;
  std::string rest;
};

std::optional<Directive> directive_of(const std::string& line) {
  std::size_t p = line.find_first_not_of(" \t");
  if (p == std::string::npos || line[p] != '#') return std::nullopt;
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos) return std::nullopt;
  std::size_t e = p;
  while (e < line.size() && std::isalpha(static_cast<unsigned char>(line[e]))) ++e;
  Directive d{line.substr(p, e - p), line.substr(e)};
  // Comments end the condition (a /* */ comment is dropped in place).
  for (std::size_t c = d.rest.find('/'); c != std::string::npos; c = d.rest.find('/', c + 1)) {
    if (c + 1 < d.rest.size() && d.rest[c + 1] == '/') {
      d.rest.resize(c);
      break;
    }
    if (c + 1 < d.rest.size() && d.rest[c + 1] == '*') {
      const std::size_t close = d.rest.find("*/", c + 2);
      d.rest.erase(c, close == std::string::npos ? std::string::npos : close + 2 - c);
    }
  }
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
        v = ConditionEvaluator(d->rest, values).evaluate();
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
          const auto v = ConditionEvaluator(d->rest, values).evaluate();
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

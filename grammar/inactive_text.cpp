#include "grammar/inactive_text.hpp"

#include <algorithm>
#include <optional>

#include "grammar/preprocessor_conditions.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// A condition of literals alone: its value; nullopt when it reads a macro.
std::optional<std::int64_t> constant(const std::string& condition) { return evaluate_condition(condition, {}); }

InactiveStep inactive_from(std::size_t begin, std::size_t end, bool with_directive) {
  InactiveStep step;
  step.drop_directive = with_directive;
  step.inactive_begin = begin;
  step.inactive_end = end;
  step.resume = end;
  return step;
}

}  // namespace

InactiveText::InactiveText(std::string_view source, std::string file_name)
    : source_(source), file_name_(std::move(file_name)) {}

InactiveStep InactiveText::after_directive(std::size_t begin, std::size_t end) {
  InactiveStep live;
  live.resume = end;
  const auto d = directive_of(source_.substr(begin, end - begin));
  if (!d) return live;
  const std::string& k = d->keyword;
  if (k == "if" || k == "ifdef" || k == "ifndef") {
    const auto value = k == "if" ? constant(d->rest) : std::nullopt;
    groups_.push_back(Group{value.has_value(), value && *value != 0, begin});
    if (!value) return live;
    if (*value != 0) return inactive_from(begin, end, true);  // `#if 1`: its line alone
    return skip_untaken(begin, end);
  }
  if (groups_.empty()) return live;  // a stray #elif, #else or #endif: the parser refuses it
  Group& g = groups_.back();
  if (k == "endif") {
    const bool decided = g.constant;
    groups_.pop_back();
    return decided ? inactive_from(begin, end, true) : live;
  }
  if (k != "elif" && k != "else") return live;
  if (g.constant) {
    // Lexing only goes on inside a constant conditional after its taken
    // branch: the rest of it is inactive, its #endif included.
    const std::size_t close = to_endif(end, g.opened);
    groups_.pop_back();
    return inactive_from(begin, close, true);
  }
  bool untaken = g.taken;
  if (!g.taken && k == "elif") {
    const auto value = constant(d->rest);
    untaken = value && *value == 0;
    g.taken = value && *value != 0;
  }
  if (!untaken) return live;
  const Found next = next_directive(end, g.opened);
  live.inactive_begin = end;
  live.inactive_end = next.line_start;
  live.resume = next.line_start;
  return live;
}

// From an `#if 0` at [begin, end): its branches up to the first one taken.
InactiveStep InactiveText::skip_untaken(std::size_t begin, std::size_t end) {
  Group& g = groups_.back();
  for (std::size_t from = end;;) {
    const Found f = next_directive(from, g.opened);
    if (f.keyword == "endif") {
      groups_.pop_back();
      return inactive_from(begin, f.end, true);
    }
    const auto value = f.keyword == "else" ? std::optional<std::int64_t>(1) : constant(f.rest);
    if (!value) {
      // `#if 0 ... #elif X`: decided when compiled after all. Its directives
      // stay for the parser (`#if 0` opens it), the untaken text between
      // them is inactive.
      g.constant = false;
      InactiveStep step;
      step.inactive_begin = end;
      step.inactive_end = f.line_start;
      step.resume = f.line_start;
      return step;
    }
    if (*value != 0) {
      g.taken = true;
      return inactive_from(begin, f.end, true);
    }
    from = f.end;
  }
}

std::size_t InactiveText::to_endif(std::size_t from, std::size_t opened) const {
  for (;;) {
    const Found f = next_directive(from, opened);
    if (f.keyword == "endif") return f.end;
    from = f.end;
  }
}

// The next #elif, #else or #endif of the conditional being skipped, from
// the end of a directive's line; nested conditionals are counted.
InactiveText::Found InactiveText::next_directive(std::size_t from, std::size_t opened) const {
  const std::size_t n = source_.size();
  int depth = 0;
  bool line_start = false;
  std::size_t start_of_line = from;
  for (std::size_t i = from; i < n;) {
    const char c = source_[i];
    if (c == '\n') {
      line_start = true;
      start_of_line = ++i;
      continue;
    }
    if (const std::size_t p = past_splice(i); p != i) {
      i = p;
      continue;
    }
    if (source_.compare(i, 2, "/*") == 0) {  // a comment is a space: a directive may follow it
      i = past_block_comment(i);
      continue;
    }
    if (source_.compare(i, 2, "//") == 0) {
      i = line_end(i);
      continue;
    }
    if (line_start && blank(c)) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      const std::size_t end = directive_end(i);
      const auto d = directive_of(source_.substr(i, end - i));
      const std::string k = d ? d->keyword : "";
      if (k == "if" || k == "ifdef" || k == "ifndef") {
        ++depth;
      } else if ((k == "elif" || k == "else" || k == "endif") && depth == 0) {
        return Found{start_of_line, i, end, k, d->rest};
      } else if (k == "endif") {
        --depth;
      }
      i = end;
      line_start = false;
      continue;
    }
    line_start = false;
    i = (c == '"' || c == '\'') ? past_literal(i) : i + 1;
  }
  fail(opened, "#if opened here is never closed: expected #endif");
}

// Where the directive at `at` ends: the newline that ends its line (not one
// inside a comment or after a backslash), a CR before it excluded.
std::size_t InactiveText::directive_end(std::size_t at) const {
  std::size_t i = at;
  while (i < source_.size() && source_[i] != '\n') {
    if (const std::size_t p = past_splice(i); p != i) i = p;
    else if (source_.compare(i, 2, "/*") == 0) i = past_block_comment(i);
    else if (source_.compare(i, 2, "//") == 0) i = line_end(i);
    else if (source_[i] == '"' || source_[i] == '\'') i = past_literal(i);
    else ++i;
  }
  return i > at && source_[i - 1] == '\r' ? i - 1 : i;
}

// Past a backslash-newline at `at` (lines spliced), or `at` itself.
std::size_t InactiveText::past_splice(std::size_t at) const {
  if (source_[at] != '\\') return at;
  std::size_t j = at + 1;
  if (j < source_.size() && source_[j] == '\r') ++j;
  return j < source_.size() && source_[j] == '\n' ? j + 1 : at;
}

std::size_t InactiveText::past_block_comment(std::size_t at) const {
  const std::size_t close = source_.find("*/", at + 2);
  if (close == std::string_view::npos) fail(at, "unterminated comment: expected '*/' before end of file");
  return close + 2;
}

// Past a quoted literal: its closing quote, or the end of its line when it
// has none (an apostrophe in prose).
std::size_t InactiveText::past_literal(std::size_t at) const {
  const char quote = source_[at];
  std::size_t i = at + 1;
  while (i < source_.size() && source_[i] != '\n') {
    if (source_[i] == '\\') i += 2;
    else if (source_[i++] == quote) return i;
  }
  return std::min(i, source_.size());
}

// The newline ending the line of `at` (a backslash-newline continues it).
std::size_t InactiveText::line_end(std::size_t at) const {
  std::size_t i = at;
  while (i < source_.size() && source_[i] != '\n') {
    const std::size_t p = past_splice(i);
    i = p != i ? p : i + 1;
  }
  return i;
}

void InactiveText::finish() const {
  for (const Group& g : groups_)
    if (g.constant) fail(g.opened, "#if opened here is never closed: expected #endif");
}

void InactiveText::fail(std::size_t at, const std::string& message) const {
  const std::string_view before = source_.substr(0, at);
  const int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_begin = before.rfind('\n');
  const int column = static_cast<int>(at - (line_begin == std::string_view::npos ? 0 : line_begin + 1)) + 1;
  throw SourceError(file_name_, line, column, message);
}

}  // namespace gi::grammar

// Text form of patches. An edit is one white-space-free word: Langdon's
// forms <a>, <a><b>, <a>+<b> (the delete, replace and insert families), or
// `family:argument`, whose argument the family reads itself
// (EditFamily::parse with an ArgumentReader, Boost.Spirit X3 underneath).
#include <algorithm>
#include <cctype>

#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {

std::string to_string(const Edit& e) { return edit_family(e.family).print(e); }

std::string to_string(const Patch& patch) {
  std::string out;
  for (const auto& e : patch.edits) {
    if (!out.empty()) out += ' ';
    out += to_string(e);
  }
  return out;
}

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string prefixes() {
  std::string out;
  for (const EditFamily* f : edit_families())
    if (f->group() != EditGroup::Line) out += (out.empty() ? "" : "/") + f->name() + ":";
  return out;
}

}  // namespace

PatchFile parse_patch_file(std::string_view text, const std::string& origin) {
  PatchFile file;
  auto position = [&](std::size_t at, int& line, int& column) {
    line = 1;
    column = 1;
    for (std::size_t p = 0; p < at && p < text.size(); ++p) {
      if (text[p] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  auto fail = [&](std::size_t at, const std::string& message) {
    int line, column;
    position(at, line, column);
    throw SourceError(origin, line, column, message);
  };

  std::size_t at = 0;
  bool any_edit = false;
  while (true) {
    while (at < text.size() && is_space(text[at])) ++at;
    if (at >= text.size()) break;
    if (text[at] == '#') {  // comment to end of line: lets patch files carry notes
      while (at < text.size() && text[at] != '\n') ++at;
      continue;
    }
    std::size_t end = at;
    while (end < text.size() && !is_space(text[end])) ++end;
    const std::string_view word = text.substr(at, end - at);
    // The edit quoted in messages: at most 40 characters of it.
    const std::string quoted(word.substr(0, std::min<std::size_t>(word.size(), 40)));

    if (word.rfind("@seed=", 0) == 0) {
      if (any_edit || file.seed_sha256) fail(at, "the seed pin '@seed=...' must come once, before every edit");
      const std::string_view hash = word.substr(6);
      if (hash.size() != 64 || !std::all_of(hash.begin(), hash.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
        fail(at + 6, "expected the seed's sha256 (64 hexadecimal digits) after '@seed='");
      file.seed_sha256 = std::string(hash);
      at = end;
      continue;
    }

    Edit e;
    std::size_t argument_at = at;
    try {
      if (word.front() == '<') {
        ArgumentReader r(word);
        e.target = r.rule_ref();
        if (r.accept('+')) {
          e.family = "insert";
          e.source = r.rule_ref();
        } else if (r.offset() < word.size() && word[r.offset()] == '<') {
          e.family = "replace";
          e.source = r.rule_ref();
        } else {
          e.family = "delete";
        }
        if (r.offset() < word.size())
          fail(at + r.offset(), "expected a space between edits, found '" + std::string(1, word[r.offset()]) + "'");
      } else {
        const std::size_t colon = word.find(':');
        const EditFamily* family = colon == std::string_view::npos ? nullptr : find_edit_family(word.substr(0, colon));
        if (family == nullptr || family->group() == EditGroup::Line)
          fail(at, "expected an edit: <rule>, <rule><rule>, <rule>+<rule>, or one of " + prefixes() + " (found '" +
                       quoted + "')");
        e.family = family->name();
        argument_at = at + colon + 1;
        ArgumentReader r(word.substr(colon + 1));
        family->parse(r, e);
        r.end();
      }
    } catch (const ArgumentError& ex) {
      fail(argument_at + ex.offset(), std::string(ex.what()) + " in edit starting '" + quoted + "'");
    }
    file.patch.edits.push_back(std::move(e));
    any_edit = true;
    at = end;
  }
  return file;
}

Patch parse_patch(std::string_view text, const std::string& origin) { return parse_patch_file(text, origin).patch; }

std::string patch_file_text(const std::string& edits, const std::string& seed_sha256) {
  std::string out;
  if (!seed_sha256.empty()) out += "@seed=" + seed_sha256 + "\n";
  return out + edits + "\n";
}

std::string patch_file_text(const Patch& patch, const std::string& seed_sha256) {
  return patch_file_text(to_string(patch), seed_sha256);
}

}  // namespace gi::grammar

#pragma once
// Inactive text: a conditional branch the preprocessor provably never takes
// (`#if 0`, an `#elif 0`, every branch after the taken one of `#if 1`). The
// preprocessor reads only its comments and directives, so prose there
// (`don't`, a backtick) is no error, and neither are braces that do not
// balance. The tokenizer makes such text one inactive comment token
// (grammar/token.hpp): kept byte for byte, never a rule, an edit or a scope.
// A conditional decided by constants alone (`#if 0 ... #else ... #endif`)
// is inactive text with its directives, so its taken branch is plain code of
// the enclosing block; one that reads a macro after all (`#if 0 ... #elif X`)
// keeps its directives for the parser, with its untaken branches inactive.
//
// Inactive text is read as the preprocessor reads a skipped group: comments
// (an unterminated `/*` is an error, as in C), quotes that run to their match
// or to the line's end (so an apostrophe hides what follows it on its line,
// as in GCC), and directives at a line's start, nested ones counted.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gi::grammar {

// What the text after a directive of live text is.
struct InactiveStep {
  bool drop_directive = false;  // the directive itself starts the inactive text
  std::size_t inactive_begin = 0, inactive_end = 0;  // [begin, end): inactive text; empty for none
  std::size_t resume = 0;                            // where lexing goes on
};

class InactiveText {
 public:
  InactiveText(std::string_view source, std::string file_name);

  // After the directive at [begin, end) of live text (`end`: where its line
  // ends). Throws SourceError for a conditional never closed or an
  // unterminated comment in inactive text.
  InactiveStep after_directive(std::size_t begin, std::size_t end);

  // At the end of the source: throws SourceError for a conditional decided
  // by constants (its directives inactive) that is never closed.
  void finish() const;

 private:
  struct Group {
    bool constant = false;  // every condition so far has a value: the directives are inactive
    bool taken = false;     // a branch is provably taken: every later one is inactive
    std::size_t opened = 0;
  };
  struct Found {
    std::size_t line_start = 0, begin = 0, end = 0;
    std::string keyword, rest;
  };

  InactiveStep skip_untaken(std::size_t begin, std::size_t end);
  std::size_t to_endif(std::size_t from, std::size_t opened) const;
  Found next_directive(std::size_t from, std::size_t opened) const;
  std::size_t directive_end(std::size_t at) const;
  std::size_t past_splice(std::size_t at) const;
  std::size_t past_block_comment(std::size_t at) const;
  std::size_t past_literal(std::size_t at) const;
  std::size_t line_end(std::size_t at) const;
  [[noreturn]] void fail(std::size_t at, const std::string& message) const;

  std::string_view source_;
  std::string file_name_;
  std::vector<Group> groups_;
};

}  // namespace gi::grammar

#pragma once
// The lexical view of a CUDA source file: what the grammar builder walks.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gi::grammar {

// Comment: a comment, or inactive text (see Token::inactive).
enum class TokenKind { Identifier, Number, String, Char, Punct, Preprocessor, Comment };

struct Token {
  TokenKind kind;
  std::string text;
  std::size_t offset = 0;  // byte offset in the source
  int line = 0;            // 1-based line of the first character
  int end_line = 0;        // line of the last character (comments, strings, # lines span lines)
  int column = 0;          // 1-based
  // A Comment that is the text of a conditional branch the preprocessor
  // provably never takes (`#if 0`), with the directives of a conditional
  // decided by constants alone: inert as a comment is (no rule, no edit, no
  // scope), but code where lines are blanked around it, since blanking its
  // directives alone would make its text live.
  bool inactive = false;

  bool is(std::string_view s) const {
    return (kind == TokenKind::Punct || kind == TokenKind::Identifier) && text == s;
  }
};

// A file read beside the kernel's (a local header): its name as included,
// its text and its tokens (none where it does not tokenize).
struct SourceFile {
  std::string name;
  std::string text;
  std::vector<Token> tokens;
};

// Splits CUDA C++ source into tokens. Throws SourceError naming file, line and
// what was expected (unterminated comment or literal, unexpected character),
// and for bytes real files carry that would go wrong later: a NUL byte
// (NVRTC reads a source only up to it, so the rest of the file would vanish
// without an error) and lone-CR line endings (classic Mac OS: the whole file
// would be one line). A leading UTF-8 byte-order mark is skipped. A branch
// the preprocessor provably never takes (`#if 0`, or what follows the taken
// branch of `#if 1`) is one inactive token: prose in it (`don't`, a
// backtick) is no error, as for the preprocessor, which only reads its
// comments and directives; a conditional decided by constants alone is
// inactive text with its directives, so its taken branch is plain code
// (grammar/inactive_text.hpp).
std::vector<Token> tokenize(std::string_view source, const std::string& file_name);

// The source without a leading UTF-8 byte-order mark, which editors on
// Windows write and NVRTC rejects ("unrecognized token"): the grammar, and
// so every variant compiled and published, starts after it.
std::string_view without_utf8_bom(std::string_view source);

bool is_cpp_keyword(std::string_view word);

// The token closing the bracket `(`, `[` or `{` at `open`, counting all
// three kinds; tokens.size() where none does. The one matcher of gi's token
// walks.
std::size_t closing_bracket(const std::vector<Token>& tokens, std::size_t open);

}  // namespace gi::grammar

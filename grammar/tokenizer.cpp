// CUDA C++ lexer written with Boost.Spirit X3. It only has to be good enough
// for the grammar builder: comments, literals, preprocessor lines (with
// backslash continuations), numbers, identifiers and punctuators.
#include <algorithm>
#include <array>
#include <boost/spirit/home/x3.hpp>
#include <cctype>
#include <unordered_set>

#include "grammar/inactive_text.hpp"
#include "grammar/source_error.hpp"
#include "grammar/token.hpp"

namespace gi::grammar {
namespace x3 = boost::spirit::x3;

namespace {

using Iterator = std::string_view::const_iterator;

// Longest punctuators first: X3 alternatives are ordered.
constexpr std::array kPunctuators = {"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=",
                                     ">=",  "==",  "!=",  "&&", "||", "+=", "-=", "*=", "/=",
                                     "%=",  "&=",  "|=",  "^=", "::"};

struct LineIndex {
  std::vector<std::size_t> starts{0};
  explicit LineIndex(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i)
      if (s[i] == '\n') starts.push_back(i + 1);
  }
  int line_of(std::size_t offset) const {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin());
  }
  int column_of(std::size_t offset) const {
    return static_cast<int>(offset - starts[line_of(offset) - 1]) + 1;
  }
};

struct Rules {
  // Expectation points (>) turn "unterminated X" into an exception that
  // carries the position; the caller converts it into a SourceError.
  x3::rule<struct line_comment_> line_comment = "line comment";
  x3::rule<struct block_comment_> block_comment = "block comment";
  x3::rule<struct preprocessor_> preprocessor = "preprocessor line";
  x3::rule<struct string_lit_> string_lit = "string literal";
  x3::rule<struct char_lit_> char_lit = "character literal";
  x3::rule<struct number_> number = "number";
  x3::rule<struct identifier_> identifier = "identifier";
  x3::rule<struct whitespace_> whitespace = "whitespace";
};

const auto line_comment_def = x3::lit("//") >> *(x3::char_ - x3::eol);
const auto block_comment_def = x3::lit("/*") >> *(x3::char_ - "*/") > x3::lit("*/");
const auto preprocessor_def = x3::lit('#') >> *((x3::lit('\\') >> x3::eol) | (x3::char_ - x3::eol));
const auto string_lit_def =
    x3::lit('"') >> *((x3::lit('\\') >> (x3::char_ - x3::eol)) | (x3::char_ - '"' - '\\' - x3::eol)) >
    x3::lit('"');
const auto char_lit_def =
    x3::lit('\'') >> +((x3::lit('\\') >> (x3::char_ - x3::eol)) | (x3::char_ - '\'' - '\\' - x3::eol)) >
    x3::lit('\'');
// A pp-number: covers 1, 1.5f, .5, 1e-3f, 0x1Fu.
const auto number_def = (x3::digit | (x3::lit('.') >> &x3::digit)) >>
                        *((x3::char_("eEpP") >> x3::char_("+-")) | x3::alnum | x3::char_("._"));
const auto identifier_def = (x3::alpha | x3::char_('_')) >> *(x3::alnum | x3::char_('_'));
const auto whitespace_def = +(x3::char_(" \t\r\n\f\v") | (x3::lit('\\') >> x3::eol));

}  // namespace

bool is_cpp_keyword(std::string_view word) {
  static const std::unordered_set<std::string_view> keywords = {
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "const_cast", "continue", "decltype", "default", "delete", "do",
      "double", "dynamic_cast", "else", "enum", "explicit", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
      "nullptr", "operator", "private", "protected", "public", "register", "reinterpret_cast",
      "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "while",
      "__global__", "__device__", "__host__", "__shared__", "__constant__", "__managed__",
      "__restrict__", "__forceinline__", "__noinline__", "__launch_bounds__", "__grid_constant__"};
  return keywords.count(word) > 0;
}

std::string_view without_utf8_bom(std::string_view source) {
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  return source.substr(0, bom.size()) == bom ? source.substr(bom.size()) : source;
}

std::vector<Token> tokenize(std::string_view source, const std::string& file_name) {
  const LineIndex lines(source);
  if (const std::size_t nul = source.find('\0'); nul != std::string_view::npos)
    throw SourceError(file_name, lines.line_of(nul), lines.column_of(nul),
                      "a NUL byte: NVRTC reads a source only up to its first NUL, so the rest of the file would be "
                      "lost without an error; remove it");
  if (source.find('\r') != std::string_view::npos && source.find('\n') == std::string_view::npos)
    throw SourceError(file_name, 1, 0,
                      "the lines end in a lone CR (classic Mac OS line endings), so the file reads as one line; "
                      "convert it to LF or CRLF first (e.g. tr '\\r' '\\n' < in.cu > out.cu)");
  std::vector<Token> tokens;
  const Iterator begin = source.begin();

  auto emit = [&](TokenKind kind) {
    return [&, kind](auto& ctx) {
      const auto range = x3::_attr(ctx);
      Token t;
      t.kind = kind;
      t.offset = static_cast<std::size_t>(range.begin() - begin);
      t.text.assign(range.begin(), range.end());
      t.line = lines.line_of(t.offset);
      t.end_line = lines.line_of(t.offset + (t.text.empty() ? 0 : t.text.size() - 1));
      t.column = lines.column_of(t.offset);
      tokens.push_back(std::move(t));
    };
  };

  x3::symbols<> punctuators;
  for (const char* p : kPunctuators) punctuators.add(p);
  const auto single_punct = x3::char_("{}()[];,.<>+*/%=&|^!~?:-");  // '-' last: elsewhere it means a range

  Rules r;
  const auto line_comment = r.line_comment = line_comment_def;
  const auto block_comment = r.block_comment = block_comment_def;
  const auto preprocessor = r.preprocessor = preprocessor_def;
  const auto string_lit = r.string_lit = string_lit_def;
  const auto char_lit = r.char_lit = char_lit_def;
  const auto number = r.number = number_def;
  const auto identifier = r.identifier = identifier_def;
  const auto whitespace = r.whitespace = whitespace_def;

  const auto token = whitespace |
                     x3::raw[line_comment][emit(TokenKind::Comment)] |
                     x3::raw[block_comment][emit(TokenKind::Comment)] |
                     x3::raw[preprocessor][emit(TokenKind::Preprocessor)] |
                     x3::raw[string_lit][emit(TokenKind::String)] |
                     x3::raw[char_lit][emit(TokenKind::Char)] |
                     x3::raw[number][emit(TokenKind::Number)] |
                     x3::raw[identifier][emit(TokenKind::Identifier)] |
                     x3::raw[punctuators | single_punct][emit(TokenKind::Punct)];

  // Text the preprocessor never compiles is one inactive comment
  // (grammar/inactive_text.hpp): lexed as code, prose in it would stop here.
  InactiveText inactive(source, file_name);
  auto emit_inactive = [&](std::size_t begin, std::size_t end) {
    while (begin < end && std::isspace(static_cast<unsigned char>(source[begin]))) ++begin;
    while (end > begin && std::isspace(static_cast<unsigned char>(source[end - 1]))) --end;
    if (begin == end) return;
    Token t;
    t.kind = TokenKind::Comment;
    t.inactive = true;
    t.offset = begin;
    t.text.assign(source.substr(begin, end - begin));
    t.line = lines.line_of(begin);
    t.end_line = lines.line_of(end - 1);
    t.column = lines.column_of(begin);
    tokens.push_back(std::move(t));
  };

  // Offsets stay those of the whole source: the mark is skipped, not removed.
  Iterator it = source.begin() + static_cast<std::ptrdiff_t>(source.size() - without_utf8_bom(source).size());
  try {
    // One token at a time: after a directive, the inactive text that may
    // follow it is not lexed.
    while (it != source.end()) {
      const std::size_t before = tokens.size();
      if (!x3::parse(it, source.end(), token)) break;
      if (tokens.size() == before || tokens.back().kind != TokenKind::Preprocessor) continue;
      const Token& directive = tokens.back();
      const InactiveStep step = inactive.after_directive(directive.offset, directive.offset + directive.text.size());
      if (step.drop_directive) tokens.pop_back();
      emit_inactive(step.inactive_begin, step.inactive_end);
      it = begin + static_cast<std::ptrdiff_t>(step.resume);
    }
  } catch (const x3::expectation_failure<Iterator>& e) {
    // The failure points at the end of input for an unterminated construct.
    const auto at = static_cast<std::size_t>(e.where() - begin);
    std::string what = e.which();
    std::string message;
    if (what == "\"*/\"" || what.find("*/") != std::string::npos)
      message = "unterminated comment: expected '*/' before end of file";
    else if (what.find('"') != std::string::npos)
      message = "unterminated string literal: expected '\"' before end of line";
    else if (what.find('\'') != std::string::npos)
      message = "unterminated character literal: expected ''' before end of line";
    else
      message = "expected " + what;
    // Report the line where the construct began, which is what a user looks for.
    std::size_t opened = at;
    for (std::size_t i = at; i > 0; --i) {
      const char c = source[i - 1];
      if ((what.find("*/") != std::string::npos && i >= 2 && source[i - 2] == '/' && c == '*') ||
          (what.find('"') != std::string::npos && c == '"') ||
          (what.find('\'') != std::string::npos && c == '\'')) {
        opened = i - (what.find("*/") != std::string::npos ? 2 : 1);
        break;
      }
    }
    throw SourceError(file_name, lines.line_of(opened), lines.column_of(opened), message);
  }
  if (it == source.end()) inactive.finish();
  if (it != source.end()) {
    const auto at = static_cast<std::size_t>(it - begin);
    const unsigned char c = static_cast<unsigned char>(*it);
    std::string shown = (c >= 32 && c < 127) ? std::string("'") + static_cast<char>(c) + "'"
                                             : "byte " + std::to_string(c);
    throw SourceError(file_name, lines.line_of(at), lines.column_of(at),
                      "unexpected character " + shown + ": expected a C++ token");
  }
  return tokens;
}

std::size_t closing_bracket(const std::vector<Token>& tokens, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < tokens.size(); ++i) {
    if (tokens[i].kind != TokenKind::Punct) continue;
    if (tokens[i].is("(") || tokens[i].is("[") || tokens[i].is("{")) ++depth;
    if ((tokens[i].is(")") || tokens[i].is("]") || tokens[i].is("}")) && --depth == 0) return i;
  }
  return tokens.size();
}

}  // namespace gi::grammar

#pragma once
// Reading the argument of a `family:argument` edit, piece by piece, with
// Boost.Spirit X3. A piece that is not there throws ArgumentError with its
// offset in the argument and what was expected; the patch parser turns that
// into a SourceError at the right line and column of the patch text.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gi::grammar {

class ArgumentError : public std::runtime_error {
 public:
  ArgumentError(std::size_t offset, const std::string& expected)
      : std::runtime_error("expected " + expected), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

class ArgumentReader {
 public:
  explicit ArgumentReader(std::string_view text) : text_(text) {}

  std::string rule_ref();    // <_kernel.cu_42>
  std::string identifier();  // a C identifier
  std::string literal();     // a number as written: 5, -0.5f, 1e3
  int integer();
  void expect(char c);
  bool accept(char c);
  // Whether `word` comes next (then read), e.g. a keyword that stands for a rule name.
  bool accept_word(std::string_view word);
  // One of `words`, listed in the error when none is there.
  std::string one_of(std::initializer_list<std::string_view> words);
  // Nothing may follow.
  void end();

  std::size_t offset() const { return at_; }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace gi::grammar

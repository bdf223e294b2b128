#pragma once
// Every error about bad input names where it is (file, line, column) and what
// was expected, so a user can fix the input without reading gi's code.
#include <stdexcept>
#include <string>

namespace gi::grammar {

class SourceError : public std::runtime_error {
 public:
  SourceError(std::string file, int line, int column, const std::string& message)
      : std::runtime_error(format(file, line, column, message)),
        file_(std::move(file)), line_(line), column_(column) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  static std::string format(const std::string& file, int line, int column,
                            const std::string& message) {
    std::string where = file;
    if (line > 0) where += ":" + std::to_string(line);
    if (column > 0) where += ":" + std::to_string(column);
    return where + ": " + message;
  }
  std::string file_;
  int line_;
  int column_;
};

}  // namespace gi::grammar

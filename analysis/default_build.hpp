#pragma once
// Which macro definitions hold in the default build: the one gi compiles,
// with no -D options. Rodinia's kernels choose a block size so:
//
//   #ifdef RD_WG_SIZE_0_0
//     #define BLOCK_SIZE RD_WG_SIZE_0_0
//   #else
//     #define BLOCK_SIZE 16
//   #endif
//
// Without -D, RD_WG_SIZE_0_0 is undefined and BLOCK_SIZE is 16. The
// directives are read in order, conditionals decided where they can be: a
// name no directive seen defines counts as undefined (0 in an #if) only when
// every local header the file includes was read too; otherwise, and where a
// condition does not parse, what the branch defines has no one value and is
// listed as undecided.
#include <map>
#include <string>
#include <vector>

namespace gi::analysis {

// One preprocessor line, with continuation lines joined.
struct DirectiveLine {
  std::string text;
  int line = 0;
  std::string file;  // "" for the kernel's own file, else the header's name
};

// Where a directive stands, for messages: "line 4", "layout.h line 4".
std::string directive_place(const std::string& file, int line);

struct MacroDefinition {
  std::vector<std::string> params;  // a function-like macro's parameters
  bool function_like = false;
  std::string body;                 // the replacement text, trimmed
  int line = 0;
  std::string file;                 // as DirectiveLine::file
  bool conditional = false;         // chosen by an #if/#ifdef the default build decides
  std::string where() const { return directive_place(file, line); }
};

struct DefaultBuild {
  std::map<std::string, MacroDefinition> defined;
  // Macros whose value depends on a condition gi cannot decide: why.
  std::map<std::string, std::string> undecided;
};

// `headers_complete`: every local header the file includes is among the lines.
DefaultBuild default_build(const std::vector<DirectiveLine>& lines, bool headers_complete);

// The directive lines of a source text (continuations joined), for a header.
std::vector<DirectiveLine> directive_lines(const std::string& text, const std::string& file);

}  // namespace gi::analysis

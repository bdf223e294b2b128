#pragma once
// A patch is a list of edits against the seed's rules (never against another
// variant). Text form: edits separated by white space, `#` to the end of a
// line is a comment. Langdon's line edits:
//   <_k.cu_42>                delete a statement or pragma line
//   <_k.cu_42><_k.cu_7>       replace line 42 by a copy of line 7 (same rule type;
//                             also <IF_..><IF_..> and <type_..><type_..>)
//   <_k.cu_42>+<_k.cu_7>      insert a copy of line 7 after line 42
// Every other family is written `name:argument` (grammar/edits/<name>.cpp;
// `gi families` lists them), e.g.
//   unroll:<for_k.cu_40>=4   ldg:<_k.cu_42>   fastmath:<_k.cu_42>   restrict:NAME
//   launch_bounds:256,2      const:NAME=5     define:NAME=VALUE     coarsen:4,strided
// A patch file may pin the seed it was made for with `@seed=<sha256 of kernel.cu>`
// before its edits; applying it to another seed is then an error.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gi::grammar {

struct Edit {
  std::string family;  // a registered family: "delete", "replace", "insert", "unroll", ...
  std::string target;  // a rule name "<...>", or a parameter or switch name
  std::string source;  // replace/insert: the rule copied
  int value = 0;       // unroll factor; launch bounds max threads; coarsen factor
  int value2 = 0;      // launch bounds min blocks (0: absent)
  std::string literal; // const/define: the value; coarsen: the item order
  bool operator==(const Edit&) const = default;
};

struct Patch {
  std::vector<Edit> edits;
  bool operator==(const Patch&) const = default;
};

std::string to_string(const Edit& edit);
std::string to_string(const Patch& patch);

// Parses the text form; throws SourceError(origin, line, column, what was
// expected). A seed pin, if present, is read and ignored (parse_patch_file
// returns it).
Patch parse_patch(std::string_view text, const std::string& origin = "patch");

// A patch as gi writes it to a file: pinned to the seed it was made against.
struct PatchFile {
  Patch patch;
  std::optional<std::string> seed_sha256;  // nullopt: not pinned (written by hand)
};

PatchFile parse_patch_file(std::string_view text, const std::string& origin = "patch");
// "@seed=<hash>\n<edits>\n" (the pin only when `seed_sha256` is not empty).
std::string patch_file_text(const Patch& patch, const std::string& seed_sha256);
// The same for a patch's edits already as text.
std::string patch_file_text(const std::string& edits, const std::string& seed_sha256);

}  // namespace gi::grammar

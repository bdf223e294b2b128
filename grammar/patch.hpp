#pragma once
// A patch is a list of edits against the seed's rules (never against another
// variant). Text form: edits separated by spaces.
//   <_k.cu_42>                delete a statement or pragma line
//   <_k.cu_42><_k.cu_7>       replace line 42 by a copy of line 7 (same rule type;
//                             also <IF_..><IF_..> and <type_..><type_..>)
//   <_k.cu_42>+<_k.cu_7>      insert a copy of line 7 after line 42
// CUDA-aware edit families (each can be switched off for ablation):
//   unroll:<for_k.cu_40>=4    `#pragma unroll 4` before the loop (=0 removes, =-1 plain)
//   ldg:<_k.cu_42>            read-only global loads on the line through __ldg
//   fastmath:<_k.cu_42>       float math calls on the line -> fast intrinsics
//   restrict:NAME             `__restrict__` on a pointer parameter
//   launch_bounds:256,2       `__launch_bounds__(256, 2)` on the kernel
//   const:NAME=5              specialise a scalar parameter to a constant
#include <string>
#include <string_view>
#include <vector>

namespace gi::grammar {

enum class EditType { Delete, Replace, Insert, Unroll, Ldg, FastMath, Restrict, LaunchBounds, Const };

// Stable lower-case name used in reports and ablation switches.
std::string edit_family(EditType type);
const std::vector<EditType>& all_edit_types();

struct Edit {
  EditType type = EditType::Delete;
  std::string target;  // rule name "<...>" or, for restrict/const, a parameter name
  std::string source;  // replace/insert: the rule copied
  int value = 0;       // unroll factor; launch bounds max threads
  int value2 = 0;      // launch bounds min blocks (0: absent)
  std::string literal; // const: the value
  bool operator==(const Edit&) const = default;
};

struct Patch {
  std::vector<Edit> edits;
  bool operator==(const Patch&) const = default;
};

std::string to_string(const Edit& edit);
std::string to_string(const Patch& patch);

// Parses the text form; throws SourceError(origin, line, column, what was expected).
Patch parse_patch(std::string_view text, const std::string& origin = "patch");

}  // namespace gi::grammar

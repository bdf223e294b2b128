#pragma once
// Where each local scalar of a kernel file first gets a value, and which
// names a line reads. The scope rule of the line families (a copy only where
// its names mean the same declaration, grammar/edit_rules.hpp) lets a line be
// copied to a place before its variables are ever assigned: such a copy reads
// an uninitialised local, undefined behaviour that may pass every check with
// one compiler and not another. Evolution found two such edits on an H100
// (evolved/nvidia-h100-80gb-hbm3/bspline-log_jacobian_gradient_exact/REVIEW.md).
// With these facts the line families also require that every local scalar a
// copied line reads is given a value textually earlier in its function: a
// conservative stand-in for definite assignment (a loop may carry a value
// around, which this rule does not credit).
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

struct LocalAssignments {
  struct Assignment {
    int pos = 0;    // the element that gives the value
    int block = 0;  // where it stands
  };
  // Per declaration (ParsedKernel::declarations): whether it needs a value
  // before it is read (a local scalar declared on its own without an
  // initialiser), and the elements that give it one (an assignment, ++/--,
  // its address passed to a call), in file order.
  std::vector<bool> needs_value;
  std::vector<std::vector<Assignment>> assignments;

  // Whether declaration d has been given a value by an element before `pos`
  // that can run on the way to (block, pos): an assignment inside one switch
  // path (#if branch) does not count for a place outside that path.
  bool assigned_before(const ParsedKernel& k, int d, int block, int pos) const;
};

LocalAssignments local_assignments(const ParsedKernel& k);

// The names a token range reads: every name (names_something) except the
// target of a plain `=` (a compound assignment, ++ and -- read their target
// too).
std::vector<std::string> names_read(const ParsedKernel& k, TokenRange range);

}  // namespace gi::grammar

#pragma once
// The value a local holds where it is read, when straight-line code decides
// it: the last `name = EXPR` before the read, on the path every execution
// takes, and the updates between (`name++`, `++name`, `name += e`,
// `name -= e`, `name *= e`), counting a loop's passes before the read where
// each pass steps the name once in lockstep with the loop's counter.
// An `if` whose only effect is to assign the name is a conditional value
// (StraightLineValue::conditional), whose sides the caller bounds apart.
// This is how kernels walk an output record:
//
//   tempIndex = tid * 4;
//   out[tempIndex++] = a;   // tid * 4
//   out[tempIndex++] = b;   // tid * 4 + 1
//
// A flow-insensitive view sees four assignments and no value. The walk goes
// back from the read over whole statements; it refuses, with the reason,
// where the value depends on the path: an assignment in a branch or loop
// body it steps over, an enclosing loop that assigns the name other than by
// one lockstep step per pass (the value may come from the previous
// iteration), an assignment other than `=` or those
// updates, a jump target, or a preprocessor conditional.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

// One update on the way from the definition to the read: `k++` is
// {'+', 1}, `k *= 4` is {'*', the tokens of 4}.
// A loop around the read whose every pass steps the name once, by the same
// amount, in lockstep with the loop's counter (`for (v = s; ...; ++v) {
// ... k += d; }`), is one update for the passes before this one: it adds
// d * (v - s), `counter` being the token of v in the loop's increment and
// [start_first, start_last] the tokens of s. Such a loop that ends before
// the read adds d times its passes (`after_loop`).
struct StraightLineUpdate {
  char op = '+';                    // '+', '-' or '*'
  std::size_t first = 1, last = 0;  // the operand's tokens; first > last: `amount`
  long long amount = 0;
  int line = 0;
  std::size_t counter = 0;  // 0: an ordinary update
  std::size_t start_first = 1, start_last = 0;
  // A loop before the read, not around it (`for (v = s; v < e; ++v) { ...
  // k += d; }`, then k read): all its passes, at most max(0, e - s), e
  // from the condition's tokens [end_first, end_last] (e + 1 for `v <= e`).
  bool after_loop = false;
  std::size_t end_first = 1, end_last = 0;
  bool end_inclusive = false;
};

struct StraightLineValue {
  std::size_t first = 0, last = 0;          // the defining expression's tokens
  std::vector<StraightLineUpdate> updates;  // after it, in program order
  int line = 0;                             // the definition's line
  // A conditional definition, `if (C) name = A;` or `if (C) name = A; else
  // name = B;` (each body one such statement, braced or not; or a chain of
  // such links, below): [first, last] is A, the value where C holds
  // (tokens [condition_first, condition_last]); where it does not, B
  // ([else_first, else_last]) or, with no else, the value the name has
  // before the if, read at token `before` (the `if`). The clamp kernels
  // write: `int l = i - 1; if (l < 0) l = 0;`.
  // An else-if chain whose every link assigns the name (`if (x < 0) n = 0;
  // else if (x >= w) n = w - 1;`, a clamp written out): the links after the
  // first, in order, each taken where every test before it failed; the
  // else, or the value before the if, where all of them fail.
  struct Link {
    std::size_t condition_first = 1, condition_last = 0;
    std::size_t first = 1, last = 0;  // the value assigned
  };
  std::vector<Link> chain = {};
  std::size_t condition_first = 1, condition_last = 0;  // none: first > last
  std::size_t else_first = 1, else_last = 0;            // none: first > last
  std::size_t before = 0;
  std::string name = "";  // the local's
  bool conditional() const { return condition_first <= condition_last; }
  bool has_else() const { return else_first <= else_last; }
};

// `use`: the token of the name where it is read, inside function `function`
// (an index into k.functions). nullopt with `why` set when the path decides
// nothing; `why` stays empty when the function neither declares nor assigns
// the name (a parameter, a macro).
std::optional<StraightLineValue> straight_line_value(const grammar::ParsedKernel& k, int function,
                                                     const std::string& name, std::size_t use, std::string& why);

}  // namespace gi::analysis

#pragma once
// Which values of a kernel are the same for every thread of a block: a taint
// analysis over one function. Uniform are literals, macros and other names
// the file does not declare (constants), the kernel's parameters (while the
// body does not assign them), blockIdx, blockDim, gridDim and warpSize, and
// locals whose every assignment is uniform and made under uniform control.
// Not uniform are threadIdx, every loaded value (a[i], *p: other threads may
// see other memory), the result of a call other than a known pure math
// function, a local whose address is taken, and anything assigned inside an
// if, loop or switch whose condition is not uniform. File-level variables
// are not uniform either (the analysis cannot see who writes them).
//
// A transformation that needs a uniform value (one atomic per warp or block
// at one address) asks here; when the answer is no, it is refused, and
// why_not() says which name made it so.
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/expression.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

class Uniformity {
 public:
  // `function`: an index into k.functions. `live`: whether a token is
  // compiled (switch paths the default setting leaves out are not looked at);
  // empty: every token.
  Uniformity(const grammar::ParsedKernel& k, int function, std::function<bool(std::size_t token)> live = {});

  // Whether `e`, evaluated at element `element` of the function, has one
  // value in every thread of a block.
  bool uniform(const Expr& e, std::size_t element) const { return !why_not(e, element); }
  // The first reason `e` is not uniform ("threadIdx", "a loaded value a[i]",
  // "local x, assigned where threads diverge"), or nullopt when it is.
  std::optional<std::string> why_not(const Expr& e, std::size_t element) const;

  // Whether every thread of a block reaches element `element` (each if,
  // loop or switch around it has a uniform condition, and no loop around it
  // can be left early).
  bool uniform_control(std::size_t element) const { return !divergence(element); }
  // The header that makes threads diverge before `element`, or nullopt.
  std::optional<std::size_t> divergence(std::size_t element) const;

  // Whether the parameter or local declaration `declaration` is ever
  // assigned in the function's body.
  bool assigned(int declaration) const { return assigned_.count(declaration) > 0; }

  // Statements of the function the analysis could not parse (it is then
  // conservative: what they assign is not uniform), as "line N: why".
  const std::vector<std::string>& unparsed() const { return unparsed_; }

 private:
  struct Definition {
    int variable;                 // declaration index
    std::optional<Expr> value;    // nullopt: not uniform whatever the rest (address taken, unparsed)
    std::size_t element;
  };

  void collect_controls();
  std::optional<Expr> header_condition(std::size_t header) const;
  void collect_definitions();
  void add_definitions(const Expr& e, std::size_t element);
  void solve();
  std::optional<std::string> why_not_under(const Expr& e, std::size_t element, const std::set<int>& tainted) const;
  std::optional<std::size_t> divergence_under(std::size_t element, const std::set<int>& tainted) const;
  int resolve(const std::string& name, std::size_t element) const;

  const grammar::ParsedKernel& k_;
  int function_;
  std::function<bool(std::size_t)> live_;
  // For each element: the headers (element indices) whose condition
  // decides whether it runs, innermost first.
  std::vector<std::vector<std::size_t>> controls_;
  // Conditions of those headers, parsed (nullopt: could not parse).
  std::vector<std::optional<Expr>> condition_;
  std::vector<bool> leaves_early_;  // loop headers whose body has break, continue, return or goto
  std::vector<Definition> definitions_;
  std::set<int> assigned_;
  std::set<int> tainted_;           // the solution: declarations that are not uniform
  std::vector<std::string> unparsed_;
};

// Names of math functions whose result depends on their arguments alone.
bool is_pure_math_function(const std::string& name);

}  // namespace gi::analysis

#pragma once
// The shape of counted for loops: `for (V = A; V < E; V++)` read into its
// parts, and the perfect nest a loop heads (`for (int k ...) { for (int j
// ...) { BODY } }`, nothing between the headers and braces), which
// warp_per_item collapses into one loop so that a short outer loop still
// gives every lane work (grammar/edits/warp_per_item.cpp). Shape only: what
// the body does to the nest's names is the caller's to check.
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/expression.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

// `for (V = A; V < E; V++)` (`<=`, `++V`, `V += 1`); ok false otherwise.
struct ForLoopForm {
  bool ok = false;
  std::string var, op;        // V, and `<` or `<=`
  bool declared_int = false;  // `for (int V = ...`
  // Tokens of A, of the step, and of `for` .. `)`.
  std::size_t start_first = 0, start_last = 0, step_first = 0, step_last = 0, header_first = 0, header_last = 0;
  std::string start, bound;  // A and E as text
  std::vector<std::string> start_names, bound_names;
  long long trips = -1;  // with literal A and E; else -1
  // A while loop read as this form (analysis/warp_per_item_sites.cpp): its
  // `V++` statement's element (no start, no step tokens); 0 for a for loop.
  std::size_t increment = 0;
};
ForLoopForm for_loop_form(const grammar::ParsedKernel& k, std::size_t header);

// The element of the closing brace of the braced body after header `h`
// (comments between skipped); 0 without braces.
std::size_t body_close(const grammar::ParsedKernel& k, std::size_t h);

// One loop of a perfect nest, outermost first.
struct NestLevel {
  std::string variable, start, span;  // span: the trip count as an expression
  std::size_t header = 0, header_first = 0, header_last = 0;  // its element, its `for` .. `)` tokens
  std::vector<std::string> names;  // the names its start and bound read
  long long trips = -1;            // with literal bounds; else -1
};

// The perfect nest the for loop at element `header` heads, its levels int
// counters declared in their headers with bounds free of the nest's counters;
// fewer than two levels: none (empty).
std::vector<NestLevel> perfect_nest(const grammar::ParsedKernel& k, std::size_t header);

// The nest's trip count when every level's bounds are literals; else -1.
long long nest_trips(const std::vector<NestLevel>& nest);

// A whole number literal (`4`, `-3`): its value, with `ok` set; 0 and ok false otherwise.
long long literal_value(const Expr& e, bool& ok);

}  // namespace gi::analysis

#pragma once
// The analyser behind analyse_parameter_use (analysis/parameter_use.hpp).
// An Analyser reads one function, the kernel or a __device__ helper it
// calls (evaluated with the call's arguments): each local's one definition,
// the guards in force at each element, the range those give an index, and
// from them each pointer's accesses, the element count they need and the
// work item. Internal to the four files that define its member functions:
//  - analysis/parameter_use.cpp: the public entry points, the constructor,
//    run(), and what the other parts read: locals and their definitions,
//    the global thread index, __constant__ sizes, the dynamic shared array;
//  - analysis/parameter_use_ranges.cpp: the range evaluator: a value's range
//    under guards, arithmetic on ranges, values along straight-line code and
//    loops, a helper's returned value;
//  - analysis/parameter_use_guards.cpp: the guards at an element (if and
//    loop conditions, early returns, short circuits) and the work item and
//    guarded axes they give;
//  - analysis/parameter_use_access.cpp: the access scanner: each pointer's
//    reads, writes and atomics, through aliases and into helpers, and the
//    count its indices need.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/cas_helpers.hpp"
#include "analysis/expression.hpp"
#include "analysis/thread_index.hpp"
#include "analysis/file_symbols.hpp"
#include "analysis/linear_form.hpp"
#include "analysis/parameter_use.hpp"
#include "analysis/straight_line_value.hpp"
#include "analysis/symbolic_size.hpp"
#include "analysis/token_ranges.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis::detail {

using grammar::ElementKind;
using grammar::TokenKind;

// An alias of the parameter (`q = p + a`, `(float*)(bytes + a) + b`):
// where it starts and how many of the parameter's elements each of its
// own covers, both counted in the parameter's elements. A float view q of
// `uchar* bytes` starts at a + 4 * b, and q[i] covers 4 bytes from
// 4 * i on. No starts and width 1: the parameter itself.
struct AliasOffsets {
  // Each start's tokens, and how many of the parameter's elements one of its units steps.
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, unsigned>> starts;
  unsigned width = 1;
  unsigned align = 1;  // the view's element alignment, in the parameter's elements (float over uchar: 4)
  bool empty() const { return starts.empty() && width == 1; }
};

// A value's range: lo <= value <= hi; hi empty when nothing bounds it (the
// global thread index before its guard). A real value (a float's, `real`:
// analysis/parameter_use_reals.cpp) is bounded by whole numbers too, and
// may fall strictly below its upper end (`strict`: v < hi, from `v < 256.0f`).
struct Range {
  SymbolicSize lo;
  std::optional<SymbolicSize> hi;
  bool real = false;
  bool strict = false;  // real only: value < hi
};

struct Bound {
  SymbolicSize limit;  // exclusive
  int line = 0;
  std::string branch;       // its comparison's branch site; "" for a loop's
  std::string past_bound;   // the direction of that site meaning "past the limit"
  std::string unreadable;   // under kUnreadable: the guard, and why gi cannot use its limit
  bool one_value = false;   // from `x == c`: one thread, never the work item's bound
  // Under kUnreadable: the limit's tokens (0, 0: none). A limit that
  // differs per thread (`i < last`, last = tid * bins + bins) still caps a
  // counter by its largest value under the guards where the counter is read.
  std::size_t limit_first = 0, limit_last = 0;
  // Whether the comparison includes its limit as written (`<=`, `==`,
  // `>=`): a whole number's limit is the same either way (x <= 9 is x < 10),
  // a real value's is not (v <= 9.0f is no v < 10.0f).
  bool inclusive = false;

  // The limit as the comparison wrote it: 10 for the upper bound of `x < 10`
  // and of `x <= 10` (limit 11), 0 for the lower bound of `x >= 0` and of
  // `x > 0` (limit 1).
  SymbolicSize written(bool lower) const { return inclusive != lower ? limit - SymbolicSize::constant(1) : limit; }
};

// The range of a value known exactly.
inline Range exact(const SymbolicSize& s) { return Range{s, s}; }

// A float literal that is a whole number (`256.0f`): that number, real;
// nullopt for any other text (analysis/parameter_use_reals.cpp).
std::optional<Range> real_literal(const std::string& text);

// A guard's key for a lower bound: kLowerBound + name (Bound::limit is then
// the smallest value, inclusive); from the false side of a ternary's test.
inline const std::string kLowerBound = "#at-least-";

// A test's key, + the name, where the name is known to differ from
// Bound::limit (`index == -1` failing): an end of its range equal to that
// value moves past it.
inline const std::string kNotEqual = "#not-";

// bounds_from's site for a condition that is no branch site (a loop's).
inline const std::string kNoSite = "-";

// The guard's key for the global thread index written out, + its axis.
inline const std::string kGlobalIndex = "#global-index-";

// A guard's key, + the expression's canonical text (canonical_text), for a
// guard on an expression that is no name: a sum (`x + dx < w`, `-1 < ante.x
// + a`) or a local vector's component (`p.x < nx`). An index holding the
// expression's terms is bounded by it (Analyser::guarded_expression).
inline const std::string kExpression = "#expr-";

// A guard's key, + the name it bounds, for a limit gi cannot use (a
// __constant__ variable, a macro it cannot see): no bound, but the reason
// the index it would have bounded is refused.
inline const std::string kUnreadable = "#unreadable-";

inline const std::set<std::string> kAssignments = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

// A sum of products of atoms (names, member reads, quotients, calls), each
// atom a name of the SymbolicSize: "@" + its text (analysis/parameter_use_partner.cpp).
struct AtomPolynomial {
  SymbolicSize form;
  std::map<std::string, Expr> atoms;  // key -> the atom
};

class Analyser {
 public:
  // `helper`: a __device__ function evaluated for a call: its parameters are
  // the call's arguments (arguments_), not the kernel's scalars.
  // `symbols`: the file's macros and constants (file_symbols), shared.
  Analyser(const grammar::ParsedKernel& k, const grammar::Function& f, const FileSymbols& symbols, bool helper = false);

  ParameterUse run();

 private:
  const grammar::ParsedKernel& k_;
  const grammar::Function& f_;
  int fn_ = -1;
  std::vector<std::size_t> elements_;
  std::size_t body_first_ = 0, body_last_ = 0;
  std::set<std::string> scalars_;
  // By-value integer vectors (int3 dim, a __constant__ uint3): each component
  // `dim.x` is a size named `dim_x` (analysis/parameter_use.hpp).
  std::map<std::string, int> vectors_;
  // By-value real parameters and __constant__s the spec sets (`float3
  // spacing`, `float scale`): a whole coordinate divided by one of them
  // (`(float)x / spacing.x`, a control-point grid's cell) is bounded by
  // taking the divisor as a positive size (real_divisor).
  std::map<std::string, int> real_vectors_;
  std::set<std::string> real_scalars_;
  // A struct passed by value (grammar/record_type.hpp): its whole-number
  // members, `p.n` a size named `p_n` (record_member_name).
  std::map<std::string, std::set<std::string>> record_sizes_;
  std::map<std::string, CasHelper> helpers_;
  // A local assigned once, where it is declared: its definition's tokens.
  std::map<std::string, std::optional<Range>> arguments_;  // a helper's parameters
  // A helper's by-value vector parameter given the caller's vector whole
  // (`interpLoop3D(..., fi_xyz, ...)`): the caller's name, whose components
  // are the sizes (fi_xyz_x) here too.
  std::map<std::string, std::string> vector_arguments_;
  std::map<std::string, std::pair<std::size_t, std::size_t>> definitions_;
  // Names a structured binding defines by a call gi reads (`auto [x, y, z] =
  // IndexToDims<true>(i, dims);`), as expressions over the call's arguments.
  std::map<std::string, Expr> bound_definitions_;
  std::set<std::string> components_assigned_;  // vector locals one of whose components a statement assigns (`p.x += 1`)
  // The expressions guards are keyed on (kExpression + canonical_text).
  mutable std::map<std::string, Expr> guarded_subjects_;
  std::set<std::string> assigned_once_;  // locals whose declaration is their only assignment
  int helper_depth_ = 0;                 // helpers followed into to get here
  // A local that only grows after its declaration: its initial value's tokens.
  std::map<std::string, std::pair<std::size_t, std::size_t>> starts_;
  // Steps `name += e` by an expression, not a number (`i += increment`):
  // a counter in starts_ by them grows only where each e is >= 0, which
  // steps_grow() judges where the counter is read.
  std::map<std::string, std::vector<std::pair<std::size_t, std::size_t>>> sized_steps_;
  std::map<std::string, int> assigned_count_;  // assignments (=, op=, ++, --) per name in the body
  std::set<std::string> loop_counters_;        // names a for's init assigns
  std::set<std::string> counts_down_;          // of those, the ones whose loop steps them down
  const bool helper_ = false;                  // a __device__ helper's: its caller's guards apply, not an exact launch
  bool reads_thread_yz_ = false;  // the body names threadIdx.y or threadIdx.z: written for blocks of more than one axis
  mutable bool block_symbols_ = false;         // threadIdx.x and blockDim.x over the block size B (shared memory)
  std::size_t declarator_ = static_cast<std::size_t>(-1);  // a static shared array's own name in its declaration
  std::optional<SymbolicSize> x_bound_;        // the guard's bound on the global index x, from the pre-pass
  mutable int per_block_line_ = 0;             // first index by blockIdx.x alone (one element per block)
  bool guarded_[3] = {false, false, false};    // a guard bounds the global index on this axis somewhere
  bool unreadable_guard_ = false;              // a guard on x names a size gi cannot use
  mutable int exact_line_[3] = {0, 0, 0};      // first unguarded use of an exact launch's global index

 public:
  // An exact launch's thread count per axis: exact_launch_variable(a), or
  // the size the user says the host launches (`--size threads_x=nelr`).
  std::string exact_names_[3] = {exact_launch_variable(0), exact_launch_variable(1), exact_launch_variable(2)};

 private:
  std::optional<Bound> work_[3];
  std::string work_variable_[3];
  std::string work_refusal_;  // why a guard on the global index gives no bound
  const FileSymbols& symbols_;
  mutable int flattened_line_ = 0;  // the first flattened 2-D global index
  // The block width a global index is written with (blockIdx.x * NUMBER_THREADS
  // + threadIdx.x): the one block size the kernel runs correctly with, 0: none.
  mutable long long written_block_ = 0;
  mutable std::string written_block_evidence_;
  std::set<std::string> values_index_;
  // Locals and parameters declared with a floating type (float, double):
  // their values are real (analysis/parameter_use_reals.cpp).
  std::set<std::string> reals_;

  // The body's tokens and expressions: inline, every part reads them.
  const grammar::Token& tok(std::size_t t) const { return k_.tokens[t]; }
  std::size_t next(std::size_t t) const {
    ++t;
    while (t <= body_last_ && tok(t).kind == TokenKind::Comment) ++t;
    return t;
  }
  std::size_t prev(std::size_t t) const { return prev_code(k_.tokens, t, body_first_); }
  std::size_t matching(std::size_t open) const { return std::min(closing(k_.tokens, open), body_last_); }
  std::size_t expression_end(std::size_t from) const { return analysis::expression_end(k_.tokens, from, body_last_); }
  std::optional<Expr> parse(std::size_t first, std::size_t last) const { return parse_expression(k_.tokens, first, last); }

  struct Comparison {
    std::string op;  // <, <=, >, >=, == ... with `subject` on the left
    const Expr* subject;
    const Expr* other;
  };

  // `a OP b` turned so that the side `is_subject` accepts is on the left
  // (the left one when both are); nullopt when neither is, or when it would
  // have to turn an operator that is no ordering.
  template <class Pred>
  static std::optional<Comparison> oriented(const Expr& c, Pred is_subject) {
    if (c.kind != ExprKind::Binary || c.children.size() != 2) return std::nullopt;
    if (is_subject(c.children[0])) return Comparison{c.text, &c.children[0], &c.children[1]};
    static const std::map<std::string, std::string> flip = {
        {"<", ">"}, {">", "<"}, {"<=", ">="}, {">=", "<="}, {"==", "=="}, {"!=", "!="}};
    if (!is_subject(c.children[1]) || !flip.count(c.text)) return std::nullopt;
    return Comparison{flip.at(c.text), &c.children[1], &c.children[0]};
  }

  using Span = std::pair<std::size_t, std::size_t>;
  using Offsets = AliasOffsets;

  // A __device__ helper with a body: in the kernel's file, else in a local
  // header (FileSymbols::header_code); `header` names that header, "" for the file.
  struct HelperFunction {
    const grammar::ParsedKernel* file = nullptr;
    const grammar::Function* function = nullptr;
    std::string header;
  };
  // The helper `name` whose parameters `accepts` takes; nullopt for none.
  template <class Accepts>
  std::optional<HelperFunction> find_helper(const std::string& name, Accepts accepts) const {
    std::optional<HelperFunction> found;
    for (const auto& f : k_.functions)
      if (f.name == name && !f.is_kernel && f.block >= 0 && &f != &f_ && accepts(f)) found = HelperFunction{&k_, &f, ""};
    if (found || !symbols_.header_code) return found;
    for (const HeaderCode& h : *symbols_.header_code)
      for (const auto& f : h.code.functions)
        if (f.name == name && !f.is_kernel && f.block >= 0 && accepts(f)) found = HelperFunction{&h.code, &f, h.name};
    return found;
  }

  struct HelperCall {
    const grammar::Function* helper = nullptr;
    const grammar::ParsedKernel* file = nullptr;  // the helper's file
    std::string header;                           // its header's name, "" for the kernel's file
    std::size_t parameter = 0;          // which of its parameters the pointer is
    std::vector<Span> arguments;        // the call's argument tokens
  };

  // analysis/parameter_use.cpp: locals and their definitions, the global thread index, sizes.
  Expr with_thread_locals(const Expr& e, int depth = 0) const;
  static bool only_builtins(const Expr& e);
  bool from_thread_index(const Expr& e, int depth = 0) const;
  bool adds_grid_stride(std::size_t from) const;
  void collect_definitions();
  void collect_late_definitions(const std::map<std::string, int>& assigned);
  int global_index_axis(const Expr& e) const;
  std::string vector_behind(const std::string& name, int depth = 0) const;
  std::optional<Expr> definition(const std::string& name) const;
  // `p.y` of a vector local defined once as `{e0, e1}` or `make_int2(e0, e1)`: e1.
  std::optional<Expr> component_definition(const Expr& member) const;
  static bool is_integer_constant(const grammar::ConstantVariable& c);
  std::string constant_refusal(const std::string& name) const;
  std::optional<std::pair<std::string, std::string>> dynamic_shared_array() const;
  std::vector<StaticShared> static_shared_arrays();
  std::optional<long long> whole_value(std::size_t first, std::size_t last) const;

  // "threadIdx.x" for the member threadIdx.x (y, z likewise), the key of a
  // guard on it; "" for anything else.
  static std::string thread_key(const Expr& e) {
    const int axis = member_axis(e, "threadIdx");
    return axis < 0 ? std::string() : std::string("threadIdx.") + "xyz"[axis];
  }
  // A + B where a guard says A < B (`tid < s`, then `red[tid + s]`): below 2 B.
  std::optional<Range> sum_below_twice(const Expr& e, const std::map<std::string, Bound>& guards, int depth) const;

  // analysis/parameter_use_ranges.cpp: the range evaluator.
  std::optional<Range> eval(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                            int depth = 0) const;
  std::optional<Range> name_range(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                                  int depth) const;
  std::optional<Range> global_index_range(int axis, const Expr& e, const std::map<std::string, Bound>& guards) const;
  // analysis/parameter_use_counted_loop.cpp: a name read in a counted for
  // loop of it that gi's elements miss (a lambda's; a shared counter's).
  std::optional<Range> counted_loop_range(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                                          int depth) const;
  std::size_t statement_last(std::size_t t) const;
  static Range plus(const Range& a, const Range& b);
  static std::optional<Range> arithmetic(const std::string& op, const Range& a, const Range& b, std::string& why,
                                         bool& known);
  // analysis/parameter_use_remainder.cpp: `a - b * (a / b)`, a % b.
  std::optional<Range> remainder_value(const Expr& minuend, const Expr& subtrahend, std::size_t at,
                                       const std::map<std::string, Bound>& guards, int depth,
                                       const std::optional<Range>& dividend_range = std::nullopt) const;
  std::optional<Range> along_path(const StraightLineValue& path, const Expr& definition,
                                  const std::map<std::string, Bound>& guards, std::string& why, int depth) const;
  std::optional<Range> conditional_value(const StraightLineValue& path, const Expr& if_value,
                                         const std::map<std::string, Bound>& guards, std::string& why,
                                         int depth) const;
  static std::optional<Range> either(const Range& a, const Range& b);
  std::optional<Range> along_loop_path(const StraightLineValue& path, const Expr& definition,
                                       const std::map<std::string, Bound>& guards, std::string& why,
                                       int depth) const;
  std::optional<Range> loop_passes(const StraightLineUpdate& u, const std::map<std::string, Bound>& guards,
                                   std::string& why, int depth) const;
  std::optional<Range> eval_linear(const LinearForm& f, const std::map<std::string, Bound>& guards, std::string& why,
                                   int depth) const;
  void refine(const Expr& test, std::map<std::string, Bound>& yes, std::map<std::string, Bound>& no) const;
  std::optional<Range> helper_value(const Expr& call, const std::map<std::string, Bound>& guards, std::string& why,
                                    int depth) const;
  std::optional<Expr> only_return() const;
  std::optional<Analyser> called_helper(const Expr& call, const std::map<std::string, Bound>& guards,
                                        int depth) const;
  static std::map<std::string, Bound> without(std::map<std::string, Bound> g, const std::string& name);
  // A local given its values by `=` in several places, declared with one,
  // where no straight-line path decides which it holds: any of them.
  std::optional<Range> joined_value(const std::string& name, int depth) const;
  bool steps_grow(const std::string& name, const std::map<std::string, Bound>& guards, std::string& why,
                  int depth) const;
  // joined_value's results, and the names it is joining now: the guards at
  // an assignment are read afresh (depth 0), so a name that reaches itself
  // through them is refused rather than followed forever.
  mutable std::map<std::string, std::optional<Range>> joined_;
  mutable std::set<std::string> joining_;
  std::optional<Range> join_assignments(const std::string& name, int depth) const;
  // An expression a guard on an expression bounds (kExpression): as linear
  // forms, its terms hold the guarded expression's, whose range the guard gives.
  std::optional<Range> guarded_expression(const Expr& e, const std::map<std::string, Bound>& guards,
                                          std::string& why, int depth) const;
  // Whether a guard may be keyed on `e` (kExpression): a sum or difference
  // that reads a name, or a vector local's component.
  bool guardable(const Expr& e) const;

  // analysis/parameter_use_partner.cpp: an index stepped in lockstep with
  // a guarded local (NiftyReg's convolution windows), summed as polynomials
  // over atoms so that the loop's passes cancel.
  std::optional<AtomPolynomial> polynomial(const Expr& e, int depth) const;
  bool reassigned(const std::string& name) const;
  std::optional<AtomPolynomial> path_polynomial(const StraightLineValue& path, int depth) const;
  std::optional<Range> polynomial_range(const AtomPolynomial& p, const std::map<std::string, Bound>& guards,
                                        int depth) const;
  std::optional<Range> partner_value(const StraightLineValue& path, std::size_t at,
                                     const std::map<std::string, Bound>& guards, int depth) const;

  // analysis/parameter_use_reals.cpp: real (float) values, bounded by guards
  // and truncated to an index.
  void collect_real_names();
  std::optional<Range> real_name(const std::string& name, const std::map<std::string, Bound>& guards,
                                 std::string& why) const;
  static std::optional<Range> real_arithmetic(const std::string& op, const Range& a, const Range& b, std::string& why);
  void collect_real_sizes();
  void collect_bound_definitions();  // analysis/parameter_use_bindings.cpp
  std::optional<Range> real_divisor(const Expr& e, int depth = 0) const;
  std::optional<std::string> component_size(const Expr& member, const std::map<std::string, int>& vectors) const;
  static std::optional<Range> truncated(const Range& r, bool toward_zero, std::string& why);
  std::optional<Range> conversion(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                                  int depth) const;
  static bool is_rounding(const Expr& e);
  std::optional<Range> narrow_load(const Expr& e) const;
  static std::optional<Range> real_extremum(bool is_min, const std::optional<Range>& a, const std::optional<Range>& b);
  std::optional<SymbolicSize> exact_quotient(const Expr& e, const std::map<std::string, Bound>& guards,
                                             int depth) const;
  void note_tested_values(std::vector<PointerUse>& pointers) const;
  static std::optional<Range> shifted_or_masked(const std::string& op, const Range& a, const Range& b);
  void helper_guard(const Expr& call, bool negated, int line, std::map<std::string, Bound>& out) const;

  // analysis/parameter_use_guards.cpp: guards, the work item.
  void bounds_from(const Expr& c, bool negated, int line, std::map<std::string, Bound>& out,
                   const std::string& if_site = kNoSite) const;
  void short_circuit_guards(std::size_t at, std::size_t token, std::map<std::string, Bound>& guards) const;
  std::optional<Expr> element_expression(const grammar::Element& el) const;
  void every_test(const Expr& e, int line, std::map<std::string, Bound>& guards) const;
  std::string if_site(const grammar::Element& h) const;
  std::optional<Expr> condition_of(const grammar::Element& h) const;
  void loop_bounds(const grammar::Element& h, std::map<std::string, Bound>& out) const;
  std::size_t prev_element(std::size_t i) const;  // index into elements_, skipping comments; elements_.size() for none
  bool is_return(std::size_t i) const;
  std::map<std::string, Bound> guards_at(std::size_t at) const;
  std::size_t element_of(std::size_t token) const;
  void find_guarded_axes();
  void note_work_item(const std::map<std::string, Bound>& guards);

  // analysis/parameter_use_access.cpp: the access scanner.
  bool loads(const Expr& e, int depth = 0) const;
  bool loads(const Expr& e, int depth, std::set<std::string>& seen) const;  // seen: names followed
  static bool is_texture_fetch(const Expr& e);
  static void fetched_as(PointerUse& u, const std::string& type);
  std::optional<std::string> texture_fetch_type(std::size_t open) const;
  // The dimensions of `tex1D/tex2D/tex3D<T>(` when token `open` is that
  // call's parenthesis (0 for none of them), and its T in `type`.
  unsigned array_fetch_dimensions(std::size_t open, std::string& type) const;
  // The guards where an access at `token` runs (its element's, and the
  // short-circuit operands and ternary tests before it), noted for the work
  // item; nullopt outside the body's elements.
  std::optional<std::map<std::string, Bound>> access_guards(std::size_t token);
  // `texture<T, dim>(name)` when token `open` is its parenthesis: a texture
  // object passed to a function written for texture references (gi init's
  // port of them, gi/seed/texture_port.hpp); true when it is one.
  bool passed_as_reference(PointerUse& u, std::size_t name_token, std::size_t open);
  // A fetch through a texture over a CUDA array: the extent its coordinates reach.
  void array_fetch(PointerUse& u, std::size_t name_token, std::size_t open, unsigned dimensions);
  // One coordinate's extent (its largest texel plus one), or nullopt with `why`.
  std::optional<SymbolicSize> coordinate_extent(const Expr& c, const std::map<std::string, Bound>& guards,
                                                bool& real, bool& normalized, std::string& why);
  void note_index_sources(const Expr& e, int depth = 0);
  static Offsets with_offset(Offsets chain, Span next);
  std::string macros_in(const std::optional<Span>& index) const;
  std::optional<Range> start_of(const Offsets& offsets, const std::map<std::string, Bound>& guards, std::string& text,
                                std::string& why) const;
  void access(PointerUse& u, std::size_t token, std::optional<Span> index, const Offsets& offsets = {},
              bool store = false);
  static std::string guards_text(const std::map<std::string, Bound>& guards);
  std::vector<SymbolicSize> facts_of(const std::map<std::string, Bound>& guards) const;
  static bool follows(const SymbolicSize& d, const std::vector<SymbolicSize>& facts);
  static void add_need(PointerUse& u, const SymbolicSize& need, const std::string& evidence,
                       const std::vector<SymbolicSize>& facts = {});
  void set_atomic(PointerUse& u, const std::string& kind, std::size_t call);
  std::string atomic_kind(const std::string& function) const;
  bool named_in_a_macro(const std::string& name) const;
  bool advanced_once(std::size_t t) const;
  std::optional<HelperCall> helper_call(std::size_t t) const;
  std::optional<HelperCall> helper_call(std::size_t first, std::size_t last) const;
  void follow_into_helper(PointerUse& u, const HelperCall& call, std::size_t t, const Offsets& offsets);
  PointerUse pointer_use(const std::string& name);
  void scan(PointerUse& u, const std::string& name, const Offsets& offsets, std::size_t from = 0);
  // analysis/parameter_use_views.cpp: a buffer viewed as another type, and the rows stores reach.
  std::optional<std::size_t> cast_alias(PointerUse& u, std::size_t t, const Offsets& offsets);
  unsigned element_bytes_of(const std::string& parameter) const;
  void view_size_needs(PointerUse& u, const Offsets& offsets, const SymbolicSize& index_hi, bool store, int line);
  void row_size_needs(PointerUse& u, const Expr& index, const std::map<std::string, Bound>& guards, int line);
  bool is_scalar_parameter(const std::string& name) const;
  bool declares_alias(std::size_t assign) const;
  std::size_t past_members(std::size_t t) const;
  void not_followed(PointerUse& u, std::size_t t, const std::string& why) const;
};

}  // namespace gi::analysis::detail

#include "analysis/parameter_use.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "analysis/aggregate_sites.hpp"
#include "analysis/cas_helpers.hpp"
#include "analysis/expression.hpp"
#include "analysis/file_symbols.hpp"
#include "analysis/macro_expansion.hpp"
#include "analysis/linear_form.hpp"
#include "analysis/straight_line_value.hpp"
#include "analysis/thread_index.hpp"
#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

// A value's range: lo <= value <= hi; hi empty when nothing bounds it (the
// global thread index before its guard).
struct Range {
  SymbolicSize lo;
  std::optional<SymbolicSize> hi;
};

struct Bound {
  SymbolicSize limit;  // exclusive
  int line = 0;
  std::string branch;       // its comparison's branch site; "" for a loop's
  std::string past_bound;   // the direction of that site meaning "past the limit"
  std::string unreadable;   // under kUnreadable: the guard, and why gi cannot use its limit
  bool one_value = false;   // from `x == c`: one thread, never the work item's bound
  // Under kUnreadable: the limit's tokens (0, 0: none) and whether the
  // comparison includes it (`<=`). A limit that differs per thread (`i <
  // last`, last = tid * bins + bins) still caps a counter by its largest
  // value under the guards where the counter is read.
  std::size_t limit_first = 0, limit_last = 0;
  bool inclusive = false;
};

// The range of a value known exactly.
Range exact(const SymbolicSize& s) { return Range{s, s}; }

// A guard's key for a lower bound: kLowerBound + name (Bound::limit is then
// the smallest value, inclusive); from the false side of a ternary's test.
const std::string kLowerBound = "#at-least-";

// bounds_from's site for a condition that is no branch site (a loop's).
const std::string kNoSite = "-";

// The guard's key for the global thread index written out, + its axis.
const std::string kGlobalIndex = "#global-index-";

// A guard's key, + the name it bounds, for a limit gi cannot use (a
// __constant__ variable, a macro it cannot see): no bound, but the reason
// the index it would have bounded is refused.
const std::string kUnreadable = "#unreadable-";

const std::set<std::string> kAssignments = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};

class Analyser {
 public:
  // `helper`: a __device__ function evaluated for a call: its parameters are
  // the call's arguments (arguments_), not the kernel's scalars.
  // `symbols`: the file's macros and constants (file_symbols), shared.
  Analyser(const grammar::ParsedKernel& k, const grammar::Function& f, const FileSymbols& symbols, bool helper = false)
      : k_(k), f_(f), helper_(helper), symbols_(symbols) {
    fn_ = static_cast<int>(&f - k.functions.data());
    for (std::size_t e = 0; e < k.elements.size(); ++e)
      if (k.elements[e].function == fn_ && k.elements[e].kind != ElementKind::FunctionHeader) {
        if (elements_.empty()) body_first_ = k.elements[e].tokens.first;
        elements_.push_back(e);
        body_last_ = k.elements[e].tokens.last;
      }
    for (const grammar::Param& p : f.params) {
      if (!p.pointer && !p.texture_object() && !helper) scalars_.insert(p.name);
      if (!p.pointer && !helper && integer_vector_size(p.base_type) > 0) vectors_[p.name] = integer_vector_size(p.base_type);
    }
    if (!helper) helpers_ = find_cas_helpers(k);
    // An integer __constant__ scalar is a size as a scalar parameter is: the
    // spec sets it ("constants"), in the kernel and in every helper alike.
    for (const auto& [name, c] : symbols_.constant_variables) {
      if (is_integer_constant(c)) scalars_.insert(name);
      if (!c.array && integer_vector_size(c.type) > 0) vectors_[name] = integer_vector_size(c.type);
    }
    collect_definitions();
  }

  ParameterUse run() {
    ParameterUse out;
    find_guarded_axes();
    for (const grammar::Param& p : f_.params) {
      if (!p.pointer && !p.texture_object()) continue;
      out.pointers.push_back(pointer_use(p.name));
    }
    // Guards on the global index that no access saw (an early return before
    // code gi cannot read) still give the work item.
    for (std::size_t i = 0; i < elements_.size(); ++i) note_work_item(guards_at(i));
    for (int a = 0; a < 3; ++a)
      if (work_[a]) {
        out.work.bound[a] = work_[a]->limit;
        out.work.variable[a] = work_variable_[a];
        out.work.evidence[a] = "line " + std::to_string(work_[a]->line) + ": " + work_variable_[a] + " < " +
                               work_[a]->limit.text();
        out.work.guard_branch[a] = work_[a]->branch;
        out.work.guard_past_bound[a] = work_[a]->past_bound;
      }
    for (int a = 0; a < 3; ++a)
      if (!work_[a] && exact_line_[a] > 0) {
        out.work.exact[a] = true;
        out.work.bound[a] = SymbolicSize::name(exact_names_[a]);
        out.work.variable[a] = std::string("global index ") + "xyz"[a];
        out.work.evidence[a] = "line " + std::to_string(exact_line_[a]) + ": the global index " + "xyz"[a] +
                               ", which indexes buffers, and no guard bounds it anywhere: the kernel is written "
                               "for a launch of exactly " + exact_names_[a] + " threads";
      }
    if (!work_[0]) out.work.refusal = work_refusal_;
    out.work.fixed_block_line = per_block_line_;
    out.work.written_block = written_block_;
    out.work.written_block_evidence = written_block_evidence_;
    out.work.flattened_rows_line = flattened_line_;
    // Buffers whose loaded values index another: integer inputs gi must not fill at random.
    for (PointerUse& u : out.pointers) u.values_index = values_index_.count(u.name) > 0;
    // The __constant__ arrays, indexed as buffers are: the element their
    // indices reach, which must lie within the declared length. Last, so that
    // the work item stays the parameters' guard's.
    for (const auto& [name, c] : symbols_.constant_variables)
      if (c.array && !scalars_.count(name)) {
        PointerUse u = pointer_use(name);
        if (!u.unused) out.constant_arrays.push_back(std::move(u));
      }
    // The dynamic shared memory (`extern __shared__ float s[];`): the element
    // its indices reach, over the block size B (threadIdx.x < B).
    if (const auto shared = dynamic_shared_array()) {
      block_symbols_ = true;
      DynamicShared d;
      d.name = shared->first;
      d.type = shared->second;
      d.use = pointer_use(d.name);
      block_symbols_ = false;
      out.dynamic_shared = std::move(d);
    }
    return out;
  }

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
  std::map<std::string, CasHelper> helpers_;
  // A local assigned once, where it is declared: its definition's tokens.
  std::map<std::string, std::optional<Range>> arguments_;  // a helper's parameters
  std::map<std::string, std::pair<std::size_t, std::size_t>> definitions_;
  std::set<std::string> assigned_once_;  // locals whose declaration is their only assignment
  int helper_depth_ = 0;                 // helpers followed into to get here
  // A local that only grows after its declaration: its initial value's tokens.
  std::map<std::string, std::pair<std::size_t, std::size_t>> starts_;
  std::map<std::string, int> assigned_count_;  // assignments (=, op=, ++, --) per name in the body
  std::set<std::string> loop_counters_;        // names a for's init assigns
  std::set<std::string> counts_down_;          // of those, the ones whose loop steps them down
  const bool helper_ = false;                  // a __device__ helper's: its caller's guards apply, not an exact launch
  mutable bool block_symbols_ = false;         // threadIdx.x and blockDim.x over the block size B (shared memory)
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

  const grammar::Token& tok(std::size_t t) const { return k_.tokens[t]; }
  std::size_t next(std::size_t t) const {
    ++t;
    while (t <= body_last_ && tok(t).kind == TokenKind::Comment) ++t;
    return t;
  }
  std::size_t prev(std::size_t t) const { return prev_code(k_.tokens, t, body_first_); }
  std::size_t matching(std::size_t open) const { return std::min(closing(k_.tokens, open), body_last_); }
  std::size_t expression_end(std::size_t from) const { return analysis::expression_end(k_.tokens, from, body_last_); }

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

  // The expression with each local that only names a built-in
  // (`int bx = blockIdx.x;`, assigned nowhere else) replaced by it:
  // `blockDim.x * bx + tx` is the global index as much as its spelled-out form.
  Expr with_thread_locals(const Expr& e, int depth = 0) const {
    if (e.kind == ExprKind::Name && assigned_once_.count(e.text) && depth < 8)
      if (auto d = definition(e.text)) {
        Expr inner = with_thread_locals(*d, depth + 1);
        if (only_builtins(inner)) return inner;
      }
    Expr out = e;
    for (Expr& c : out.children) c = with_thread_locals(c, depth);
    return out;
  }

  // threadIdx, blockIdx, blockDim, gridDim members joined by + and *:
  // `blockIdx.x + gridDim.x * blockIdx.y` (a block number), `threadIdx.x`.
  static bool only_builtins(const Expr& e) {
    for (const char* builtin : {"threadIdx", "blockIdx", "blockDim", "gridDim"})
      if (member_axis(e, builtin) >= 0) return true;
    if (e.kind != ExprKind::Binary || (e.text != "+" && e.text != "*") || e.children.size() != 2) return false;
    return only_builtins(e.children[0]) && only_builtins(e.children[1]);
  }

  // Whether the expression reads threadIdx or blockIdx (following locals).
  bool from_thread_index(const Expr& e, int depth = 0) const {
    if (depth > 16) return false;
    if (member_axis(e, "threadIdx") >= 0 || member_axis(e, "blockIdx") >= 0) return true;
    if (e.kind == ExprKind::Name)
      if (const auto d = definition(e.text)) return from_thread_index(*d, depth + 1);
    for (const Expr& c : e.children)
      if (from_thread_index(c, depth)) return true;
    return false;
  }

  // Whether the expression from `from` to its end is blockDim.x * gridDim.x.
  bool adds_grid_stride(std::size_t from) const {
    const auto e = parse(from, expression_end(from));
    return e && is_grid_stride(*e);
  }

  void collect_definitions() {
    std::map<std::string, int> assigned, increments;
    for (std::size_t t = body_first_; t <= body_last_; ++t) {
      if (tok(t).kind != TokenKind::Identifier) continue;
      const std::size_t n = next(t);
      const bool assigns = n <= body_last_ && (kAssignments.count(tok(n).text) || tok(n).is("++") || tok(n).is("--"));
      const std::size_t p = prev(t);
      if (tok(p).is(".") || tok(p).is("->")) continue;  // `g[i].x = v` assigns a member, not a local x
      if (assigns || tok(p).is("++") || tok(p).is("--")) ++assigned[tok(t).text];
      // x++, ++x, x += <whole number>, x += blockDim.x * gridDim.x (a
      // grid-stride loop's step): the value only grows.
      const bool grows = tok(n).is("++") || tok(p).is("++") ||
                         (tok(n).is("+=") && tok(next(n)).kind == TokenKind::Number &&
                          tok(next(n)).text.find_first_not_of("0123456789uUlL") == std::string::npos &&
                          (tok(next(next(n))).is(";") || tok(next(next(n))).is(")"))) ||
                         (tok(n).is("+=") && adds_grid_stride(next(n)));
      if (grows) ++increments[tok(t).text];
    }
    assigned_count_ = assigned;
    for (std::size_t e : elements_) {
      const grammar::Element& el = k_.elements[e];
      if (el.kind != ElementKind::Declaration && !(el.kind == ElementKind::LoopHeader && el.is_for)) continue;
      // `T name = expr;` (one declarator), or a for's init `int c = expr`.
      for (std::size_t t = el.tokens.first; t <= el.tokens.last; ++t) {
        if (tok(t).kind != TokenKind::Identifier || !tok(next(t)).is("=")) continue;
        const std::string name = tok(t).text;
        const std::size_t start = next(next(t));  // after the '='
        const std::size_t end = std::min(expression_end(start), el.tokens.last);
        // Loop counters are assigned again by their increment: their
        // definition is the init (the lower end), their range the guard's.
        if (el.kind == ElementKind::LoopHeader) {
          loop_counters_.insert(name);
          // for (...; ...; i--), i -= d, i >>= d, i /= d: it counts down from its init.
          for (std::size_t u = end; u < el.tokens.last; ++u)
            if (tok(u).is(name) && (tok(next(u)).is("--") || tok(prev(u)).is("--") || tok(next(u)).is("-=") ||
                                   tok(next(u)).is(">>=") || tok(next(u)).is("/=")))
              counts_down_.insert(name);
        }
        if (assigned[name] <= 1 || el.kind == ElementKind::LoopHeader) definitions_[name] = {start, end};
        if (assigned[name] <= 1 && el.kind != ElementKind::LoopHeader) assigned_once_.insert(name);
        // A counter that only grows (a while loop's): its start is its lower end.
        else if (assigned[name] - 1 == increments[name]) starts_[name] = {start, end};
        break;
      }
    }
  }

  // Axis of a global thread index expression (analysis/thread_index.hpp),
  // or of blockIdx.y / blockIdx.z alone (a block row per item: the spec's
  // blocks are B x 1 x 1, so that is one item per grid row); -1 otherwise.
  // The flattened 2-D form is noted: it holds on a grid of one row only.
  int global_index_axis(const Expr& e) const {
    const GlobalIndexForm f = global_index_form(with_thread_locals(e));
    if (f.flattened_rows && flattened_line_ == 0) flattened_line_ = tok(e.first).line;
    if (f.fixed_width) {
      // Blocks of K threads written out: a global index only where K has one
      // value a launch can take (on x; the block size is then fixed at K).
      // K: a number, or a whole-number macro (its value in the default build).
      std::optional<long long> value = whole_literal(*f.fixed_width);
      if (const auto m = symbols_.integer_macros.find(f.fixed_width->text);
          !value && f.fixed_width->kind == ExprKind::Name && m != symbols_.integer_macros.end())
        value = m->second.value;
      if (f.axis != 0 || !value) return -1;
      const long long width = *value;
      if (width < 1 || width > 1024 || (written_block_ && written_block_ != width)) return -1;
      if (!written_block_) {
        const std::string written = expression_text(k_.tokens, *f.fixed_width);
        written_block_ = width;
        written_block_evidence_ = "line " + std::to_string(tok(e.first).line) + ": the global index '" +
                                  expression_text(k_.tokens, e) + "' is written for blocks of " + written +
                                  (written == std::to_string(width) ? "" : " = " + std::to_string(width)) + " threads";
      }
    }
    return f.axis;
  }

  std::optional<Expr> parse(std::size_t first, std::size_t last) const { return parse_expression(k_.tokens, first, last); }

  // The integer vector a local copies (`const int3 dim = c_Dim;`, assigned
  // nowhere else): its components are the vector's sizes. Else the name.
  std::string vector_behind(const std::string& name, int depth = 0) const {
    if (vectors_.count(name) || depth > 4 || !assigned_once_.count(name)) return name;
    const auto d = definition(name);
    return d && d->kind == ExprKind::Name ? vector_behind(d->text, depth + 1) : name;
  }

  std::optional<Expr> definition(const std::string& name) const {
    const auto it = definitions_.find(name);
    if (it == definitions_.end()) return std::nullopt;
    return parse(it->second.first, it->second.second);
  }

  // Whether the expression (following locals) reads memory: an index from data.
  bool loads(const Expr& e, int depth = 0) const {
    if (depth > 16) return false;
    if (e.kind == ExprKind::Index) return true;
    if (e.kind == ExprKind::Unary && e.text == "*") return true;
    if (is_texture_fetch(e)) return true;
    if (e.kind == ExprKind::Name)
      if (const auto d = definition(e.text)) return loads(*d, depth + 1);
    for (const Expr& c : e.children)
      if (loads(c, depth)) return true;
    return false;
  }

  // tex1Dfetch(t, i), tex2D<float>(t, x, y), ...: a load through a texture.
  static bool is_texture_fetch(const Expr& e) {
    if (e.kind != ExprKind::Call || e.children.empty()) return false;
    // The parser keeps a fetch's template argument in the callee's name
    // (`tex1Dfetch<float4>`, analysis/expression.hpp).
    const std::string name = e.callee();
    return name.rfind("tex1D", 0) == 0 || name.rfind("tex2D", 0) == 0 || name.rfind("tex3D", 0) == 0 ||
           name.rfind("surf", 0) == 0;
  }

  // A texture fetched as `type`: fetched as two types, the spec cannot say ("?").
  static void fetched_as(PointerUse& u, const std::string& type) {
    u.texture_type = u.texture_type.empty() || u.texture_type == type ? type : "?";
  }

  // The T of `tex1Dfetch<T>(` when token `open` is that call's parenthesis.
  std::optional<std::string> texture_fetch_type(std::size_t open) const {
    if (!tok(open).is("(")) return std::nullopt;
    const std::size_t close = prev(open);
    if (!tok(close).is(">")) return std::nullopt;
    const std::size_t type = prev(close), angle = prev(type);
    if (tok(type).kind != TokenKind::Identifier || !tok(angle).is("<") || !tok(prev(angle)).is("tex1Dfetch"))
      return std::nullopt;
    return tok(type).text;
  }

  static bool is_integer_constant(const grammar::ConstantVariable& c) {
    static const std::set<std::string> integer{"int", "signed", "signed int", "unsigned", "unsigned int",
                                               "int32_t", "uint32_t", "long", "unsigned long", "long long",
                                               "unsigned long long", "size_t", "int64_t", "uint64_t"};
    return !c.array && integer.count(c.type) > 0;
  }

  // Why a name from outside the kernel gives no value: a __constant__
  // variable a spec cannot set as a size ("" for any other name).
  std::string constant_refusal(const std::string& name) const {
    const auto c = symbols_.constant_variables.find(name);
    if (c == symbols_.constant_variables.end() || is_integer_constant(c->second) || vectors_.count(name)) return "";
    return "'" + name + "' is a __constant__ " + c->second.type + (c->second.array ? " array" : "") + " (line " +
           std::to_string(c->second.line) +
           "): a spec sets no array constants, and only an int or unsigned one (or an integer vector's component) is a size";
  }

  void note_index_sources(const Expr& e, int depth = 0) {
    if (depth > 16) return;
    if (e.kind == ExprKind::Index && !e.children.empty() && e.children[0].kind == ExprKind::Name)
      values_index_.insert(e.children[0].text);
    if (e.kind == ExprKind::Name)
      if (const auto d = definition(e.text)) note_index_sources(*d, depth + 1);
    for (const Expr& c : e.children) note_index_sources(c, depth);
  }

  std::optional<Range> eval(const Expr& e, const std::map<std::string, Bound>& guards, std::string& why,
                            int depth = 0) const {
    if (depth > 16) {
      why = "the definitions go too deep";
      return std::nullopt;
    }
    switch (e.kind) {
      case ExprKind::Literal:
        if (const auto v = whole_literal(e)) return exact(SymbolicSize::constant(*v));
        why = "'" + e.text + "' is no whole number";
        return std::nullopt;
      case ExprKind::Name: {
        // `#define BLOCK_SIZE 16`: the macro is its value wherever it stands.
        if (const auto m = symbols_.integer_macros.find(e.text); m != symbols_.integer_macros.end())
          return exact(SymbolicSize::constant(m->second.value));
        const auto g = guards.find(e.text);
        const auto low = guards.find(kLowerBound + e.text);
        if (g != guards.end() && low != guards.end())  // a clamp's branch: both ends known
          return Range{low->second.limit, g->second.limit - SymbolicSize::constant(1)};
        if (const auto a = arguments_.find(e.text); a != arguments_.end()) {
          // A helper's parameter: the caller's argument, where it could say.
          if (a->second) return a->second;
          if (why.empty()) why = "the argument for '" + e.text + "' has no range gi can see";
          return std::nullopt;
        }
        std::optional<Range> own;
        std::string inner;  // why its definition has no range, under a guard
        // A local assigned more than once: the value straight-line code
        // gives it at this read (`out[k++]` after `k = tid * 4`), if any.
        std::string path_why;
        const auto path = assigned_once_.count(e.text) ? std::nullopt
                                                       : straight_line_value(k_, fn_, e.text, e.first, path_why);
        const auto path_value = path ? parse(path->first, path->last) : std::nullopt;
        const auto st = starts_.find(e.text);
        if (path_value) {
          own = along_path(*path, *path_value, without(guards, e.text), g == guards.end() ? why : inner, depth + 1);
        } else if (st != starts_.end() && g != guards.end()) {
          // A growing counter under a guard: from its start up to the guard.
          if (const auto d = parse(st->second.first, st->second.second))
            if (const auto r = eval(*d, without(guards, e.text), inner, depth + 1))
              own = Range{r->lo, std::nullopt};
        } else if (st != starts_.end()) {
          // A counter that grows (a loop's) under a guard whose limit differs
          // per thread: from its start up to the limit's largest value here.
          const auto u = guards.find(kUnreadable + e.text);
          if (u != guards.end() && u->second.limit_last > 0)
            if (const auto limit = parse(u->second.limit_first, u->second.limit_last)) {
              std::string ignored;
              const auto l = eval(*limit, without(guards, e.text), ignored, depth + 1);
              const auto d = parse(st->second.first, st->second.second);
              const auto start = d ? eval(*d, without(guards, e.text), ignored, depth + 1) : std::nullopt;
              if (l && l->hi && start)  // a negative start is the caller's to refuse (`in[j + 1]`)
                return Range{start->lo, u->second.inclusive ? *l->hi : *l->hi - SymbolicSize::constant(1)};
            }
          // Else its start is only its lowest value.
          if (why.empty())
            why = u != guards.end()      ? u->second.unreadable
                  : !path_why.empty() && !loop_counters_.count(e.text) ? path_why
                                      : "'" + e.text + "' grows from its start and no guard gi can read bounds it";
          return std::nullopt;
        } else if (const auto d = definition(e.text)) {
          own = eval(*d, g == guards.end() ? guards : without(guards, e.text), g == guards.end() ? why : inner,
                     depth + 1);
          // A loop's counter starts at its init: that is its largest value
          // only where the loop counts down; else with no bound here (read
          // after the loop, or under a condition gi cannot read) it has none.
          if (own && g == guards.end() && loop_counters_.count(e.text) && !counts_down_.count(e.text)) {
            if (why.empty()) why = "'" + e.text + "' is a loop's counter, and no bound of the loop holds here";
            own.reset();
          }
        }
        if (g != guards.end()) {
          // The guard gives the upper end; the lower end is the definition's.
          if (!own || !own->lo.non_negative_for_sizes()) {
            if (why.empty())
              why = !own && !inner.empty() ? "'" + e.text + "': its definition: " + inner
                                           : "'" + e.text + "' may be negative";
            return std::nullopt;
          }
          return Range{own->lo, g->second.limit - SymbolicSize::constant(1)};
        }
        if (own) return own;
        if (scalars_.count(e.text)) return exact(SymbolicSize::name(e.text));
        if (const std::string c = constant_refusal(e.text); !c.empty()) {
          if (why.empty()) why = c;
          return std::nullopt;
        }
        if (const auto m = symbols_.macro_refusals.find(e.text); m != symbols_.macro_refusals.end()) {
          if (why.empty()) why = m->second;
          return std::nullopt;
        }
        if (why.empty()) why = path_why.empty() ? "nothing bounds '" + e.text + "'" : path_why;
        return std::nullopt;
      }
      case ExprKind::Cast:
        return e.children.empty() ? std::nullopt : eval(e.children[0], guards, why, depth);
      case ExprKind::Unary:
        // `k++` reads k; `++k` reads k + 1 (k as straight-line code leaves it here).
        if (e.children.size() == 1 && (e.text == "post++" || e.text == "post--"))
          return eval(e.children[0], guards, why, depth);
        if (e.children.size() == 1 && (e.text == "++" || e.text == "--")) {
          const auto a = eval(e.children[0], guards, why, depth);
          bool known = true;
          return a ? arithmetic("+", *a, exact(SymbolicSize::constant(e.text == "++" ? 1 : -1)), why, known)
                   : std::nullopt;
        }
        if (e.children.size() == 1 && (e.text == "-" || e.text == "+")) {
          const auto a = eval(e.children[0], guards, why, depth);
          if (!a) return std::nullopt;
          if (e.text == "+") return a;
          if (!a->hi) break;
          return Range{*a->hi * SymbolicSize::constant(-1), a->lo * SymbolicSize::constant(-1)};
        }
        break;
      case ExprKind::Ternary: {
        // `x < a ? a : (x > b ? b : x)`: each side under what its test says of x.
        if (e.children.size() != 3) break;
        std::map<std::string, Bound> yes = guards, no = guards;
        refine(e.children[0], yes, no);
        const auto t = eval(e.children[1], yes, why, depth), f = eval(e.children[2], no, why, depth);
        if (!t || !f || !t->hi || !f->hi) return std::nullopt;
        // Sizes are at least 1, so `last - 1` and `last` are ordered.
        const auto least = (t->lo - f->lo).non_negative_for_sizes()   ? f->lo
                           : (f->lo - t->lo).non_negative_for_sizes() ? t->lo
                                                                      : std::optional<SymbolicSize>();
        const auto most = (*t->hi - *f->hi).non_negative_for_sizes()   ? *t->hi
                          : (*f->hi - *t->hi).non_negative_for_sizes() ? *f->hi
                                                                       : std::optional<SymbolicSize>();
        if (!least || !most) {
          why = "gi cannot order the two sides of '" + expression_text(k_.tokens, e) + "'";
          return std::nullopt;
        }
        return Range{*least, *most};
      }
      case ExprKind::Call: {
        if (const auto m = symbols_.function_macros.find(e.callee()); m != symbols_.function_macros.end()) {
          const auto expanded = expand_macro_call(e, m->first, m->second, why);
          return expanded ? eval(*expanded, guards, why, depth + 1) : std::nullopt;
        }
        if (const auto r = helper_value(e, guards, why, depth)) return r;
        // min/max: what clamps write (min(max(x + dx, 0), width - 1)).
        const std::string f = e.callee();
        const bool is_min = f == "min" || f == "std::min" || f == "umin" || f == "imin";
        const bool is_max = f == "max" || f == "std::max" || f == "umax" || f == "imax";
        if ((!is_min && !is_max) || e.children.size() != 3) break;
        std::string ignored;
        const auto a = eval(e.children[1], guards, ignored, depth), b = eval(e.children[2], guards, ignored, depth);
        const auto is_exact = [](const std::optional<Range>& r) { return r && r->hi && *r->hi == r->lo; };
        const auto at_least = [](const SymbolicSize& x, const SymbolicSize& y) { return (x - y).non_negative(); };
        Range out;
        if (is_min) {
          // min(a, b) <= either side; >= 0 when both are.
          if (is_exact(b)) out.hi = b->lo;
          else if (is_exact(a)) out.hi = a->lo;
          else if (a && b && a->hi && b->hi)
            out.hi = at_least(*b->hi, *a->hi) ? a->hi : at_least(*a->hi, *b->hi) ? b->hi : std::nullopt;
          if (!(a && b && a->lo.non_negative_for_sizes() && b->lo.non_negative_for_sizes())) {
            why = "'" + expression_text(k_.tokens, e) + "' may be negative";
            return std::nullopt;
          }
          out.lo = a->lo.non_negative() ? (b->lo.non_negative() && at_least(a->lo, b->lo) ? b->lo : a->lo) : SymbolicSize();
          if (!b->lo.non_negative() || !a->lo.non_negative()) out.lo = SymbolicSize();
        } else {
          // max(a, b) >= either side; <= the larger bound.
          if (is_exact(b) && b->lo.non_negative()) out.lo = b->lo;
          else if (is_exact(a) && a->lo.non_negative()) out.lo = a->lo;
          else if (!(a && b && a->lo.non_negative() && b->lo.non_negative())) {
            why = "'" + expression_text(k_.tokens, e) + "' may be negative";
            return std::nullopt;
          }
          if (a && b && a->hi && b->hi)
            out.hi = at_least(*a->hi, *b->hi) ? a->hi : at_least(*b->hi, *a->hi) ? b->hi : std::nullopt;
        }
        return out;
      }
      case ExprKind::Member:
        // In a block's own memory: threadIdx.x below the block size B, blockDim.x B.
        if (block_symbols_ && !e.children.empty() && e.field == "x") {
          if (e.children[0].is_name("threadIdx")) return Range{SymbolicSize(), SymbolicSize::name("B") - SymbolicSize::constant(1)};
          if (e.children[0].is_name("blockDim")) return exact(SymbolicSize::name("B"));
        }
        // blockIdx.x alone (one element per block, a two-pass reduction's
        // partial sums) under a guard on the global index x: below the
        // grid's blocks, ceil_div(bound, B), with the block size fixed
        // (WorkItem::fixed_block_line) so the buffer's length and contents
        // do not change with tuning.
        if (!helper_ && !block_symbols_ && !e.children.empty() && e.children[0].is_name("blockIdx") && e.field == "x") {
          if (x_bound_) {
            if (per_block_line_ == 0) per_block_line_ = tok(e.first).line;
            return Range{SymbolicSize(), SymbolicSize::ceil_div(*x_bound_, SymbolicSize::constant(written_block_ ? written_block_ : kFixedBlock)) -
                                             SymbolicSize::constant(1)};
          }
        }
        // blockIdx.y alone: a row of blocks per item, the global index y.
        if (const int axis = e.children.empty() || !e.children[0].is_name("blockIdx") ? -1 : global_index_axis(e);
            axis > 0)
          return global_index_range(axis, e, guards);
        if (!e.children.empty() && (e.children[0].is_name("threadIdx") || e.children[0].is_name("blockIdx")))
          return Range{SymbolicSize(), std::nullopt};
        if (!e.children.empty() && e.children[0].kind == ExprKind::Name && e.text == ".")
          if (const auto v = vectors_.find(vector_behind(e.children[0].text)); v != vectors_.end()) {
            const std::string fields = "xyzw";
            const std::size_t axis = e.field.size() == 1 ? fields.find(e.field[0]) : std::string::npos;
            if (axis != std::string::npos && static_cast<int>(axis) < v->second)
              return exact(SymbolicSize::name(vector_component_name(v->first, e.field[0])));
          }
        if (!e.children.empty() && e.children[0].kind == ExprKind::Name)  // c_ImageDim.x
          if (const std::string c = constant_refusal(e.children[0].text); !c.empty()) {
            if (why.empty()) why = c;
            return std::nullopt;
          }
        break;
      case ExprKind::Binary: {
        if (const int axis = global_index_axis(e); axis >= 0) return global_index_range(axis, e, guards);
        if (e.children.size() != 2) break;
        const auto a = eval(e.children[0], guards, why, depth);
        if (!a) return std::nullopt;
        const auto b = eval(e.children[1], guards, why, depth);
        if (!b) return std::nullopt;
        bool known = true;
        if (const auto r = arithmetic(e.text, *a, *b, why, known); r || known) return r;
        break;
      }
      default:
        break;
    }
    if (why.empty()) why = "'" + expression_text(k_.tokens, e) + "' is not arithmetic gi can bound";
    return std::nullopt;
  }

  // The global index on an axis: below its guard's bound; with no guard on
  // the axis anywhere, below the exact launch's thread count.
  std::optional<Range> global_index_range(int axis, const Expr& e, const std::map<std::string, Bound>& guards) const {
    const auto g = guards.find(kGlobalIndex + std::to_string(axis));
    if (g != guards.end()) return Range{SymbolicSize(), g->second.limit - SymbolicSize::constant(1)};
    if (!helper_ && !guarded_[axis] && (axis > 0 || !unreadable_guard_)) {
      if (exact_line_[axis] == 0) exact_line_[axis] = tok(e.first).line;
      return Range{SymbolicSize(), SymbolicSize::name(exact_names_[axis]) - SymbolicSize::constant(1)};
    }
    return Range{SymbolicSize(), std::nullopt};
  }

  // a OP b for + - * / %: nullopt with `known` false where the operator or
  // its operands are beyond what gi bounds (minus or divided by a range,
  // a product of possibly negative values); with `known` true and `why`
  // set where it is one of them but the result has no bound gi can write.
  // a + b: both ends add; no upper end where either has none.
  static Range plus(const Range& a, const Range& b) {
    return Range{a.lo + b.lo, a.hi && b.hi ? std::optional<SymbolicSize>(*a.hi + *b.hi) : std::nullopt};
  }

  static std::optional<Range> arithmetic(const std::string& op, const Range& a, const Range& b, std::string& why,
                                         bool& known) {
    known = false;
    const auto both = [&](auto f) -> std::optional<SymbolicSize> {
      if (!a.hi || !b.hi) return std::nullopt;
      return f(*a.hi, *b.hi);
    };
    const bool b_exact = b.hi && *b.hi == b.lo;
    if (op == "+") return plus(a, b);
    if (op == "-" && b_exact)
      return Range{a.lo - b.lo, a.hi ? std::optional<SymbolicSize>(*a.hi - b.lo) : std::nullopt};
    // Minus a range: its largest value gives the least result (`i - 1 - bx`).
    if (op == "-" && b.hi) return Range{a.lo - *b.hi, a.hi ? std::optional<SymbolicSize>(*a.hi - b.lo) : std::nullopt};
    // Sizes are at least 1, so `nx - 1` is a factor at least 0 as `nx` is.
    if (op == "*" && a.lo.non_negative_for_sizes() && b.lo.non_negative_for_sizes())
      return Range{a.lo * b.lo, both([](auto x, auto y) { return x * y; })};
    if ((op == "/" || op == "%") && b_exact && a.lo.non_negative_for_sizes()) {
      const SymbolicSize d = b.lo;
      if (op == "%") return Range{SymbolicSize(), d - SymbolicSize::constant(1)};
      if (!a.hi) return Range{SymbolicSize(), std::nullopt};
      if (const auto q = (*a.hi + SymbolicSize::constant(1)).divided_by(d))
        return Range{SymbolicSize(), *q - SymbolicSize::constant(1)};
      // Not exact: a / d <= ceil_div(hi + 1, d) - 1 for a divisor of one
      // positive term (a size, a product of sizes, a whole number).
      if (d.is_monomial() && d.non_negative() && !(d == SymbolicSize()))
        return Range{SymbolicSize(), SymbolicSize::ceil_div(*a.hi + SymbolicSize::constant(1), d) -
                                         SymbolicSize::constant(1)};
      known = true;
      why = "(" + a.hi->text() + " + 1) / (" + d.text() + ") is not exact";
    }
    return std::nullopt;
  }

  // A local's value from straight-line code: its definition, then each
  // update on the way to the read (`k *= 4`, `k++`) in program order.
  std::optional<Range> along_path(const StraightLineValue& path, const Expr& definition,
                                  const std::map<std::string, Bound>& guards, std::string& why, int depth) const {
    for (const StraightLineUpdate& u : path.updates)
      if (u.counter) return along_loop_path(path, definition, guards, why, depth);
    auto value = eval(definition, guards, why, depth);
    for (const StraightLineUpdate& u : path.updates) {
      if (!value) return std::nullopt;
      std::optional<Range> operand = exact(SymbolicSize::constant(u.amount));
      if (u.first <= u.last) {
        const auto e = parse(u.first, u.last);
        operand = e ? eval(*e, guards, why, depth) : std::nullopt;
        if (!operand) return std::nullopt;
      }
      bool known = true;
      value = arithmetic(std::string(1, u.op), *value, *operand, why, known);
      if (!value && why.empty())
        why = "line " + std::to_string(u.line) + " updates it by what gi cannot bound (" + u.op + "=)";
    }
    return value;
  }

  // A value that a loop around the read steps in lockstep with its counter
  // v from s: the definition, each step, and d * (v - s) for the passes
  // before this one, summed as one linear form (analysis/linear_form.hpp)
  // so that a name in both the definition and s cancels: `jacIndex = base +
  // x - 1` stepped by `for (pixelX = x - 1; ...)` is base + pixelX, and
  // pixelX's guards bound it. A name that stands in two of these parts must
  // hold one value throughout (assigned at most once), or the parts would
  // mean different values by one name.
  std::optional<Range> along_loop_path(const StraightLineValue& path, const Expr& definition,
                                       const std::map<std::string, Bound>& guards, std::string& why,
                                       int depth) const {
    LinearForm sum = linear_form(k_.tokens, definition);
    std::map<std::string, int> parts_naming;  // name -> how many parts name it
    const auto note = [&](const Expr& e) {
      std::set<std::string> mine;
      for (const std::string& n : names_in(e)) mine.insert(n);
      for (const std::string& n : mine) ++parts_naming[n];
    };
    note(definition);
    std::vector<Range> products;  // steps by a size: d * (v - s) as ranges
    for (const StraightLineUpdate& u : path.updates) {
      const std::string where = "line " + std::to_string(u.line);
      if (u.op == '*') {
        why = where + " multiplies it (*=), and a loop steps it";
        return std::nullopt;
      }
      const long long sign = u.op == '-' ? -1 : 1;
      std::optional<Expr> operand;
      if (u.first <= u.last && !(operand = parse(u.first, u.last))) {
        why = where + ": gi cannot read its step";
        return std::nullopt;
      }
      // The step as a whole number, where it is one.
      LinearForm step;
      step.constant = u.amount;
      if (operand) {
        step = linear_form(k_.tokens, *operand);
        note(*operand);
      }
      const bool whole = step.terms.empty();
      const long long amount = step.constant;
      if (!u.counter) {
        if (operand) sum.add(step, sign);
        else sum.constant += sign * u.amount;
        continue;
      }
      const auto v = parse(u.counter, u.counter), start = parse(u.start_first, u.start_last);
      if (!v || !start) {
        why = where + ": gi cannot read the loop's counter";
        return std::nullopt;
      }
      note(*start);
      LinearForm passes = linear_form(k_.tokens, *v);
      passes.add(linear_form(k_.tokens, *start), -1);
      if (whole) {
        sum.add(passes, sign * amount);
        continue;
      }
      // A step by a size (`offset += cols`): both factors at least 0.
      const auto d = eval(*operand, guards, why, depth);
      const auto n = d ? eval_linear(passes, guards, why, depth) : std::nullopt;
      if (!d || !n) return std::nullopt;
      bool known = true;
      const auto product = sign > 0 && d->lo.non_negative() && n->lo.non_negative()
                               ? arithmetic("*", *d, *n, why, known)
                               : std::nullopt;
      if (!product) {
        if (why.empty()) why = where + " steps it by '" + expression_text(k_.tokens, *operand) + "', which may be negative";
        return std::nullopt;
      }
      products.push_back(*product);
    }
    for (const auto& [name, parts] : parts_naming)
      if (parts > 1 && assigned_count_.count(name) && assigned_count_.at(name) > 1) {
        why = "'" + name + "' is assigned more than once, and both the value and its loop's start name it";
        return std::nullopt;
      }
    auto value = eval_linear(sum, guards, why, depth);
    for (const Range& p : products) {
      if (!value) break;
      bool known = true;
      value = arithmetic("+", *value, p, why, known);
    }
    return value;
  }

  // A linear form's range: each term's range times its coefficient, summed.
  std::optional<Range> eval_linear(const LinearForm& f, const std::map<std::string, Bound>& guards, std::string& why,
                                   int depth) const {
    Range total = exact(SymbolicSize::constant(f.constant));
    for (const auto& [text, term] : f.terms) {
      const auto r = eval(term.atom, guards, why, depth + 1);
      if (!r) return std::nullopt;
      const SymbolicSize c = SymbolicSize::constant(term.coefficient);
      Range scaled{r->lo * c, r->hi ? std::optional<SymbolicSize>(*r->hi * c) : std::nullopt};
      if (term.coefficient < 0) {
        if (!r->hi) {
          if (why.empty()) why = "'" + text + "' has no upper end, and it is subtracted";
          return std::nullopt;
        }
        scaled = Range{*r->hi * c, r->lo * c};
      }
      total = Range{total.lo + scaled.lo,
                    total.hi && scaled.hi ? std::optional<SymbolicSize>(*total.hi + *scaled.hi) : std::nullopt};
    }
    return total;
  }

  // What the ternary's test `x OP c` (c known) says of x where it holds
  // (`yes`) and where it fails (`no`).
  void refine(const Expr& test, std::map<std::string, Bound>& yes, std::map<std::string, Bound>& no) const {
    const auto cmp = oriented(test, [](const Expr& e) { return e.kind == ExprKind::Name; });
    if (!cmp) return;
    const std::string& op = cmp->op;
    const Expr *x = cmp->subject, *c = cmp->other;
    std::string ignored;
    const auto r = eval(*c, {}, ignored);
    if (!r || !r->hi || !(*r->hi == r->lo)) return;
    const SymbolicSize v = r->lo, one = SymbolicSize::constant(1);
    const auto upper = [&](std::map<std::string, Bound>& g, SymbolicSize limit) { g[x->text] = Bound{limit, 0, "", "", "", false}; };
    const auto lower = [&](std::map<std::string, Bound>& g, SymbolicSize least) {
      g[kLowerBound + x->text] = Bound{least, 0, "", "", "", false};
    };
    if (op == "<") upper(yes, v), lower(no, v);
    else if (op == "<=") upper(yes, v + one), lower(no, v + one);
    else if (op == ">") lower(yes, v + one), upper(no, v + one);
    else if (op == ">=") lower(yes, v), upper(no, v);
  }

  // A call of a __device__ helper whose body ends in its only `return EXPR;`:
  // EXPR's range, its parameters standing for the call's arguments.
  std::optional<Range> helper_value(const Expr& call, const std::map<std::string, Bound>& guards, std::string& why,
                                    int depth) const {
    const std::string name = call.callee();
    const grammar::Function* helper = nullptr;
    for (const auto& f : k_.functions)
      if (f.name == name && !f.is_kernel && f.block >= 0) helper = &f;
    if (!helper || depth > 8 || helper->params.size() + 1 != call.children.size()) return std::nullopt;
    Analyser sub(k_, *helper, symbols_, true);
    for (std::size_t i = 0; i < helper->params.size(); ++i) {
      std::string ignored;
      sub.arguments_[helper->params[i].name] = eval(call.children[i + 1], guards, ignored, depth + 1);
    }
    std::optional<std::size_t> ret;
    for (std::size_t i = 0; i < sub.elements_.size(); ++i)
      if (sub.is_return(i)) {
        if (ret) return std::nullopt;  // several returns: not followed
        ret = i;
      }
    if (!ret) return std::nullopt;
    const grammar::Element& el = k_.elements[sub.elements_[*ret]];
    const auto e = sub.parse(sub.next(el.tokens.first), sub.prev(el.tokens.last));
    if (!e) return std::nullopt;
    std::string inner;
    const auto r = sub.eval(*e, {}, inner, depth + 1);
    if (!r && why.empty()) why = "in " + name + ": " + inner;
    return r;
  }

  static std::map<std::string, Bound> without(std::map<std::string, Bound> g, const std::string& name) {
    g.erase(name);
    return g;
  }

  // Bounds from `cond` holding (negated: from it failing, as before an early
  // return). `if_site`: the branch site of an `if` whose whole condition
  // `cond` is ("" inside && or ||, whose operands are sites of their own;
  // kNoSite for a loop's condition).
  void bounds_from(const Expr& c, bool negated, int line, std::map<std::string, Bound>& out,
                   const std::string& if_site = kNoSite) const {
    if (c.kind != ExprKind::Binary || c.children.size() != 2) return;
    if ((!negated && c.text == "&&") || (negated && c.text == "||")) {
      const std::string operand = if_site == kNoSite ? kNoSite : "";
      bounds_from(c.children[0], negated, line, out, operand);
      bounds_from(c.children[1], negated, line, out, operand);
      return;
    }
    // Normalise to `name OP limit`; the global thread index written out
    // (`if (threadIdx.x + blockIdx.x * blockDim.x >= size) return;`) is the
    // name kGlobalIndex + axis.
    const auto cmp =
        oriented(c, [&](const Expr& e) { return e.kind == ExprKind::Name || global_index_axis(e) >= 0; });
    if (!cmp) return;
    std::string op = cmp->op;
    const Expr *name = cmp->subject, *limit = cmp->other;
    const std::string key =
        name->kind == ExprKind::Name ? name->text : kGlobalIndex + std::to_string(global_index_axis(*name));
    if (negated) {
      static const std::map<std::string, std::string> opposite = {
          {">=", "<"}, {">", "<="}, {"<", ">="}, {"<=", ">"}, {"!=", "=="}};
      if (!opposite.count(op)) return;
      op = opposite.at(op);
    }
    std::string why;
    // `0 < x` (x > 0): x's least value, as a clamp's false side gives it.
    if ((op == ">" || op == ">=") && name->kind == ExprKind::Name) {
      const auto r = eval(*limit, {}, why);
      if (r && r->hi && *r->hi == r->lo)
        out.emplace(kLowerBound + key, Bound{op == ">" ? r->lo + SymbolicSize::constant(1) : r->lo, line, "", "", "",
                                             false});
      return;
    }
    // `i == c` bounds i by c as `i <= c` does (its lower end is its definition's).
    if (op != "<" && op != "<=" && op != "==") return;
    const auto r = eval(*limit, {}, why);
    if (!r || !r->hi || !(*r->hi == r->lo)) {
      Bound u{SymbolicSize(), line, "", "", "", false};
      u.unreadable = "the guard '" + expression_text(k_.tokens, c) + "' (line " + std::to_string(line) +
                     ") names no size gi can use" + (why.empty() ? std::string() : ": " + why);
      u.limit_first = limit->first;
      u.limit_last = limit->last;
      u.inclusive = op == "<=";
      out.emplace(kUnreadable + key, u);
      return;
    }
    SymbolicSize l = r->lo;
    if (op == "<=" || op == "==") l = l + SymbolicSize::constant(1);
    Bound b{l, line, "", "", "", false};
    b.one_value = op == "==";
    if (if_site != kNoSite) {
      b.branch = !if_site.empty() ? if_site
                                  : "op@" + std::to_string(tok(c.first).line) + ":" + std::to_string(tok(c.first).column);
      b.past_bound = negated ? "true" : "false";
    }
    out.emplace(key, b);
  }

  // A read inside an if's or a while's condition, right of `&&` (or `||`,
  // or in a ternary's branch): what the left operand says holds there, as
  // `if (x < nx && mask[x] >= 0)` reads mask only where x < nx.
  void short_circuit_guards(std::size_t at, std::size_t token, std::map<std::string, Bound>& guards) const {
    const grammar::Element& el = k_.elements[elements_[at]];
    const std::optional<Expr> c = element_expression(el);
    if (!c) return;
    const int line = tok(el.tokens.first).line;
    const auto holds = [&](const Expr& e) { return e.first <= token && token <= e.last; };
    for (const Expr* e = &*c; e != nullptr;) {
      const Expr* inner = nullptr;
      if (e->kind == ExprKind::Binary && (e->text == "&&" || e->text == "||") && e->children.size() == 2 &&
          holds(e->children[1])) {
        bounds_from(e->children[0], e->text == "||", line, guards);
        inner = &e->children[1];
      } else if (e->kind == ExprKind::Ternary && e->children.size() == 3 && !holds(e->children[0])) {
        const bool then = holds(e->children[1]);
        bounds_from(e->children[0], !then, line, guards);
        inner = &e->children[then ? 1 : 2];
      } else {
        for (const Expr& child : e->children)
          if (holds(child)) inner = &child;
      }
      e = inner;
    }
  }

  // The expression an element evaluates: an if's or while's condition, an
  // expression statement, a return's value, a declaration's first initialiser.
  std::optional<Expr> element_expression(const grammar::Element& el) const {
    if (el.kind == ElementKind::IfHeader) return condition_of(el);
    if (el.kind == ElementKind::LoopHeader && tok(el.tokens.first).is("while") && tok(el.tokens.last).is(")"))
      return parse(next(next(el.tokens.first)), prev(el.tokens.last));
    if ((el.kind != ElementKind::Statement && el.kind != ElementKind::Declaration) || !tok(el.tokens.last).is(";"))
      return std::nullopt;
    std::size_t first = el.tokens.first;
    if (tok(first).is("return")) first = next(first);
    if (el.kind == ElementKind::Declaration) {
      std::size_t eq = first;
      while (eq < el.tokens.last && !tok(eq).is("=") && !tok(eq).is("(") && !tok(eq).is("[")) eq = next(eq);
      if (!tok(eq).is("=")) return std::nullopt;
      first = next(eq);
      return parse(first, expression_end(first));
    }
    if (first >= el.tokens.last) return std::nullopt;
    return parse(first, prev(el.tokens.last));
  }

  // Every test a `&&`, `||` or ternary in `e` makes, as if it held: whether
  // the kernel guards an axis somewhere (a ternary `i < n ? in[i] : 0`).
  void every_test(const Expr& e, int line, std::map<std::string, Bound>& guards) const {
    if (e.kind == ExprKind::Binary && (e.text == "&&" || e.text == "||") && e.children.size() == 2)
      bounds_from(e.children[0], e.text == "||", line, guards);
    if (e.kind == ExprKind::Ternary && e.children.size() == 3) bounds_from(e.children[0], false, line, guards);
    for (const Expr& child : e.children) every_test(child, line, guards);
  }

  // "if@L:C": the branch site of an `if` header (its keyword's position).
  std::string if_site(const grammar::Element& h) const {
    const grammar::Token& t = tok(h.tokens.first);
    return "if@" + std::to_string(t.line) + ":" + std::to_string(t.column);
  }

  std::optional<Expr> condition_of(const grammar::Element& h) const {
    if (!h.condition) return std::nullopt;
    return parse(h.condition->first + 1, h.condition->last - 1);
  }

  // `for (init; cond; step)`: the cond's bounds.
  void loop_bounds(const grammar::Element& h, std::map<std::string, Bound>& out) const {
    std::size_t semis[2] = {0, 0};
    int found = 0, depth = 0;
    for (std::size_t t = h.tokens.first; t <= h.tokens.last && found < 2; ++t) {
      if (tok(t).is("(")) ++depth;
      if (tok(t).is(")")) --depth;
      if (depth == 1 && tok(t).is(";")) semis[found++] = t;
    }
    if (found < 2 || semis[1] <= semis[0] + 1) return;
    if (const auto c = parse(semis[0] + 1, semis[1] - 1)) bounds_from(*c, false, tok(h.tokens.first).line, out);
  }

  std::size_t prev_element(std::size_t i) const {  // index into elements_, skipping comments; elements_.size() for none
    while (i > 0) {
      --i;
      if (k_.elements[elements_[i]].kind != ElementKind::Comment) return i;
    }
    return elements_.size();
  }

  bool is_return(std::size_t i) const {
    const grammar::Element& el = k_.elements[elements_[i]];
    return el.kind == ElementKind::Statement && tok(el.tokens.first).is("return");
  }

  // The guards in force at element elements_[at].
  std::map<std::string, Bound> guards_at(std::size_t at) const {
    std::map<std::string, Bound> out;
    const auto add_header = [&](std::size_t h) {
      if (h >= elements_.size()) return;
      const grammar::Element& el = k_.elements[elements_[h]];
      if (el.kind == ElementKind::IfHeader) {
        if (const auto c = condition_of(el)) bounds_from(*c, false, tok(el.tokens.first).line, out, if_site(el));
      } else if (el.kind == ElementKind::LoopHeader && el.is_for) {
        loop_bounds(el, out);
      } else if (el.kind == ElementKind::LoopHeader && tok(el.tokens.first).is("while") &&
                 tok(el.tokens.last).is(")")) {
        // `while (cond)` (not do's trailing while, which ends in ';')
        if (const auto c = parse(next(next(el.tokens.first)), prev(el.tokens.last)))
          bounds_from(*c, false, tok(el.tokens.first).line, out);
      }
    };
    // A braceless body's header, and that header's own where it is the
    // braceless body of another (`for (i ...) for (j ...) if (...) s;`).
    // (The grammar marks only the last statement of such a chain a braceless
    // body; a header before it awaits one.)
    for (std::size_t b = at; b < elements_.size();) {
      const std::size_t h = prev_element(b);
      const bool body = k_.elements[elements_[b]].braceless_body ||
                        (h < elements_.size() && k_.elements[elements_[h]].awaits_braceless_body);
      if (!body || h >= elements_.size()) break;
      add_header(h);
      b = h;
    }
    int depth = 0;
    for (std::size_t i = at; i-- > 0;) {
      const grammar::Element& el = k_.elements[elements_[i]];
      if (el.kind == ElementKind::BlockClose) {
        // `if (cond) { return; }` before us: the code here runs where cond fails.
        const std::size_t r = prev_element(i), o = r < elements_.size() ? prev_element(r) : elements_.size();
        const std::size_t h = o < elements_.size() ? prev_element(o) : elements_.size();
        if (depth == 0 && h < elements_.size() && is_return(r) && k_.elements[elements_[o]].kind == ElementKind::BlockOpen &&
            k_.elements[elements_[h]].kind == ElementKind::IfHeader)
          if (const auto c = condition_of(k_.elements[elements_[h]]))
            bounds_from(*c, true, tok(k_.elements[elements_[h]].tokens.first).line, out, if_site(k_.elements[elements_[h]]));
        ++depth;
        continue;
      }
      if (el.kind == ElementKind::BlockOpen) {
        if (depth > 0) {
          --depth;
          continue;
        }
        add_header(prev_element(i));
        continue;
      }
      // `if (cond) return;` before us.
      if (depth == 0 && is_return(i) && el.braceless_body) {
        const std::size_t h = prev_element(i);
        if (h < elements_.size() && k_.elements[elements_[h]].kind == ElementKind::IfHeader)
          if (const auto c = condition_of(k_.elements[elements_[h]]))
            bounds_from(*c, true, tok(k_.elements[elements_[h]].tokens.first).line, out, if_site(k_.elements[elements_[h]]));
      }
    }
    return out;
  }

  std::size_t element_of(std::size_t token) const {
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      const grammar::Element& el = k_.elements[elements_[i]];
      if (el.tokens.first <= token && token <= el.tokens.last) return i;
    }
    return elements_.size();
  }

  // The kernel's `extern __shared__ T name[];` (in its body or the file's):
  // its name and T.
  std::optional<std::pair<std::string, std::string>> dynamic_shared_array() const {
    for (std::size_t t = 0; t + 4 < k_.tokens.size(); ++t) {
      if (!tok(t).is("extern") || !tok(next(t)).is("__shared__")) continue;
      // extern __shared__ [__align__(N)] TYPE... NAME [ ]
      std::size_t u = next(next(t));
      std::string type;
      std::size_t name = 0;
      for (; u < k_.tokens.size() && !tok(u).is("[") && !tok(u).is(";"); u = next(u)) {
        if (tok(u).is("__align__")) {
          u = closing(k_.tokens, next(u));
          continue;
        }
        if (tok(u).kind != TokenKind::Identifier) continue;
        if (name) type += (type.empty() ? "" : " ") + tok(name).text;
        name = u;
      }
      // In this kernel's body, or at file level (every kernel's).
      bool here = true;
      for (std::size_t e = 0; e < k_.elements.size(); ++e)
        if (k_.elements[e].tokens.first <= t && t <= k_.elements[e].tokens.last)
          here = k_.elements[e].function < 0 || k_.elements[e].function == fn_;
      if (name && tok(u).is("[") && here) return std::make_pair(tok(name).text, type);
    }
    return std::nullopt;
  }

  // Which axes a guard bounds somewhere in the kernel (and whether x's is
  // one gi cannot read), before any access is bounded: an axis no guard
  // bounds is an exact launch's. The work item itself is still the first
  // guard an access meets, as before, so the state is put back.
  void find_guarded_axes() {
    const auto work = work_[0], work_y = work_[1], work_z = work_[2];
    const std::string refusal = work_refusal_;
    const std::string variables[3] = {work_variable_[0], work_variable_[1], work_variable_[2]};
    const int flattened = flattened_line_;
    for (std::size_t i = 0; i < elements_.size(); ++i) {
      auto guards = guards_at(i);
      if (const auto e = element_expression(k_.elements[elements_[i]]))
        every_test(*e, tok(k_.elements[elements_[i]].tokens.first).line, guards);
      note_work_item(guards);
    }
    for (int a = 0; a < 3; ++a) guarded_[a] = work_[a].has_value();
    if (work_[0]) x_bound_ = work_[0]->limit;
    unreadable_guard_ = !work_refusal_.empty();
    work_[0] = work, work_[1] = work_y, work_[2] = work_z;
    work_refusal_ = refusal;
    for (int a = 0; a < 3; ++a) work_variable_[a] = variables[a];
    flattened_line_ = flattened;
  }

  // Records the guard on a global index variable as the work item's bound.
  void note_work_item(const std::map<std::string, Bound>& guards) {
    for (const auto& [key, bound] : guards) {
      if (key.rfind(kUnreadable, 0) == 0) {
        const std::string name = key.substr(kUnreadable.size());
        const auto d = definition(name);
        if (work_refusal_.empty() && (name.rfind(kGlobalIndex, 0) == 0 || (d && global_index_axis(*d) >= 0)))
          work_refusal_ = bound.unreadable;
      }
    }
    for (const auto& [name, bound] : guards) {
      if (name.rfind(kUnreadable, 0) == 0 || bound.one_value) continue;
      if (name.rfind(kGlobalIndex, 0) == 0) {
        const int axis = name.back() - '0';
        if (!work_[axis]) {
          work_[axis] = bound;
          work_variable_[axis] = std::string("global index ") + "xyz"[axis];
        }
        continue;
      }
      auto d = definition(name);
      if (!d)  // a while loop's counter that grows from the global index by the grid's stride
        if (const auto st = starts_.find(name); st != starts_.end()) d = parse(st->second.first, st->second.second);
      if (!d) continue;
      int axis = global_index_axis(*d);
      if (axis < 0 && d->kind == ExprKind::Name)  // a loop counter that starts at the global index
        if (const auto dd = definition(d->text)) axis = global_index_axis(*dd);
      if (axis < 0 || work_[axis]) continue;
      work_[axis] = bound;
      work_variable_[axis] = name;
    }
  }

  using Span = std::pair<std::size_t, std::size_t>;
  using Offsets = std::vector<Span>;  // an alias chain's starts, summed (none: the parameter itself)

  static Offsets with_offset(Offsets chain, Span next) {
    chain.push_back(next);
    return chain;
  }

  // "; BLOCK_SIZE = 16 (line 3)" for each integer macro the index reads: the
  // evidence for a number in the count.
  std::string macros_in(const std::optional<Span>& index) const {
    std::string out;
    if (!index) return out;
    std::set<std::string> seen;
    for (std::size_t t = index->first; t <= index->second; ++t) {
      const auto m = symbols_.integer_macros.find(tok(t).text);
      if (tok(t).kind != TokenKind::Identifier || m == symbols_.integer_macros.end() || !seen.insert(m->first).second)
        continue;
      out += "; " + m->first + " = " + std::to_string(m->second.value) + " (" + m->second.where() + ")";
    }
    return out;
  }

  // Where an alias starts: the sum of its chain's offsets (`q = p + a;
  // float* r = &q[b];`: a + b) under `guards`, their text in `text`; nullopt
  // with `why` where one has no range.
  std::optional<Range> start_of(const Offsets& offsets, const std::map<std::string, Bound>& guards, std::string& text,
                                std::string& why) const {
    Range sum{SymbolicSize(), SymbolicSize()};
    text.clear();
    for (const Span& s : offsets) {
      const auto o = parse(s.first, s.second);
      if (!o) {
        why = "gi cannot read the alias's start on line " + std::to_string(tok(s.first).line);
        return std::nullopt;
      }
      const std::string t = expression_text(k_.tokens, *o);
      text += (text.empty() ? "" : " + ") + t;
      std::string owhy;
      const auto r = eval(*o, guards, owhy);
      if (!r) {
        why = "the alias's start '" + t + "': " + owhy;
        return std::nullopt;
      }
      sum = plus(sum, *r);
    }
    return sum;
  }

  // An access at `token` with index tokens `index` (none: element 0), into
  // the buffer at `offsets` past its start (an alias `q = p + offset`, or a chain of them).
  void access(PointerUse& u, std::size_t token, std::optional<Span> index, const Offsets& offsets = {},
              bool store = false) {
    const int line = tok(token).line;
    if (u.first_line == 0) u.first_line = line;
    const std::size_t at = element_of(token);
    if (at >= elements_.size()) return;
    auto guards = guards_at(at);
    short_circuit_guards(at, token, guards);
    note_work_item(guards);
    std::optional<Range> r;
    std::string why, text = "0";
    if (!index) {
      r = Range{SymbolicSize(), SymbolicSize()};
    } else if (const auto e = parse(index->first, index->second)) {
      text = expression_text(k_.tokens, *e);
      note_index_sources(*e);
      r = eval(*e, guards, why);
      if (!r && loads(*e)) {
        u.index_from_data = true;
        why = "its index '" + text + "' is computed from loaded data";
      }
    } else {
      why = "gi cannot read the index on line " + std::to_string(line);
    }
    if (r && !offsets.empty()) {
      // The alias's start plus its own index.
      std::string start_text;
      const auto start = start_of(offsets, guards, start_text, why);
      text = start_text + " + " + text;
      r = start ? std::optional<Range>(plus(*start, *r)) : std::nullopt;
    }
    if (r && !r->hi) {
      why = "nothing bounds the index '" + text + "' (no guard names its bound)";
      const auto e = index ? parse(index->first, index->second) : std::nullopt;
      if (e && from_thread_index(*e))
        why += ": it is the thread's own number, as in a kernel written for a launch of exactly as many threads "
               "as elements, which a spec cannot promise (its block size B is tuned and its grid rounds up); a "
               "guard such as `if (i < n)` says the size";
    }
    // A guard that would bound it, but by a size gi cannot use: its reason.
    if (!r || !r->hi)
      if (const auto e = index ? parse(index->first, index->second) : std::nullopt)
        for (const std::string& n : names_in(*e))
          if (const auto g = guards.find(kUnreadable + n); g != guards.end()) {
            why = "the index '" + text + "': " + g->second.unreadable;
            break;
          }
    if (!r || !r->hi || !r->lo.non_negative_for_sizes()) {
      if (r && r->hi) why = "the index '" + text + "' may be negative";
      if (u.refusal.empty()) u.refusal = "line " + std::to_string(line) + ": " + why;
      u.count.reset();
      return;
    }
    if (store && r->lo == SymbolicSize()) u.store_reaches_zero = true;
    const SymbolicSize need = *r->hi + SymbolicSize::constant(1);
    add_need(u, need, "line " + std::to_string(line) + ": " + u.name + "[" + text + "]" + guards_text(guards) +
                          macros_in(index), facts_of(guards));
  }

  // ", i < n (line 3); row < rows (line 2)": the guards an access is under.
  static std::string guards_text(const std::map<std::string, Bound>& guards) {
    std::string out;
    for (const auto& [name, b] : guards) {
      if (name.rfind(kUnreadable, 0) == 0 || name.rfind(kLowerBound, 0) == 0) continue;
      const std::string what =
          name.rfind(kGlobalIndex, 0) == 0 ? std::string("global index ") + "xyz"[name.back() - '0'] : name;
      out += (out.empty() ? ", " : "; ") + what + " < " + b.limit.text() + " (line " + std::to_string(b.line) + ")";
    }
    return out;
  }

  // One access's need joined to the buffer's count: the larger of the two
  // where one provably is; else the user decides.
  // What an access's guards on the global index say where it runs: a
  // thread's global index is at least 0, so a guard `index < L` that lets it
  // through means L >= 1 (`Size - t - 1 >= 1` under `x < Size - t - 1`).
  // Each fact is an expression >= 0 there (L - 1).
  std::vector<SymbolicSize> facts_of(const std::map<std::string, Bound>& guards) const {
    std::vector<SymbolicSize> out;
    for (const auto& [name, b] : guards) {
      if (name.rfind(kUnreadable, 0) == 0 || name.rfind(kLowerBound, 0) == 0) continue;
      bool global = name.rfind(kGlobalIndex, 0) == 0;
      if (!global)
        if (const auto d = definition(name)) global = global_index_axis(*d) >= 0;
      if (global) out.push_back(b.limit - SymbolicSize::constant(1));
    }
    return out;
  }

  // Whether d >= 0 wherever the facts hold (each >= 0) and names are sizes:
  // d itself, or d - m * f for one fact f and m = 1 or a name of d.
  static bool follows(const SymbolicSize& d, const std::vector<SymbolicSize>& facts) {
    if (d.non_negative_for_sizes()) return true;
    for (const SymbolicSize& f : facts) {
      std::vector<SymbolicSize> multipliers = {SymbolicSize::constant(1)};
      for (const std::string& n : d.names()) multipliers.push_back(SymbolicSize::name(n));
      for (const SymbolicSize& m : multipliers)
        if ((d - m * f).non_negative_for_sizes()) return true;
    }
    return false;
  }

  // `facts`: what holds where this access runs (facts_of); the count so far
  // covers its need where they prove it.
  static void add_need(PointerUse& u, const SymbolicSize& need, const std::string& evidence,
                       const std::vector<SymbolicSize>& facts = {}) {
    if (!u.refusal.empty()) return;
    if (!u.count) {
      u.count = need;
      u.count_evidence = evidence;
    } else if (!(*u.count == need)) {
      // The larger of the two where one provably is; else the user decides.
      // Sizes are at least 1: cols * rows covers cols * rows - cols + 1.
      if ((need - *u.count).non_negative_for_sizes()) {
        u.count = need;
        u.count_evidence = evidence;
      } else if ((*u.count - need).non_negative_for_sizes()) {
        // the count so far covers it
      } else if (follows(*u.count - need, facts)) {
        u.count_evidence += "; it covers " + need.text() + " (" + evidence + ") where that access runs";
      } else {
        // Neither provably the larger (it depends on the sizes): the buffer holds both.
        u.count_evidence = "the larger of " + u.count->text() + " (" + u.count_evidence + ") and " + need.text() +
                           " (" + evidence + ")";
        u.count = SymbolicSize::max_of(*u.count, need);
      }
    }
  }

  void set_atomic(PointerUse& u, const std::string& kind, std::size_t call) {
    u.read = u.written = true;
    u.atomic = !u.atomic.empty() && u.atomic != kind ? "other" : kind;  // two kinds on one buffer: no identity
    if (u.atomic_where.empty()) u.atomic_where = "line " + std::to_string(tok(call).line) + ": " + tok(call).text;
  }

  std::string atomic_kind(const std::string& function) const {
    if (const auto op = combinable_atomic(function)) return op->kind;
    if (function == "atomicSub") return "sub";
    if (const auto h = helpers_.find(function); h != helpers_.end()) return h->second.operation.kind;
    if (function.rfind("atomic", 0) == 0) return "other";
    return "";
  }

  bool named_in_a_macro(const std::string& name) const {
    const std::regex word("\\b" + name + "\\b");
    for (const grammar::Token& t : k_.tokens)
      if (t.kind == TokenKind::Preprocessor && std::regex_search(t.text, word)) return true;
    return false;
  }

  // Whether the `+=` after the name at `t` is a statement of its own, the
  // only assignment to the name, and runs once per thread (in no loop).
  bool advanced_once(std::size_t t) const {
    if (!tok(prev(t)).is(";") && !tok(prev(t)).is("{") && !tok(prev(t)).is("}") && !tok(prev(t)).is(")")) return false;
    int assignments = 0;
    for (std::size_t v = body_first_; v <= body_last_; ++v)
      if (tok(v).kind == TokenKind::Identifier && tok(v).text == tok(t).text && !tok(prev(v)).is(".") &&
          !tok(prev(v)).is("->") &&
          (kAssignments.count(tok(next(v)).text) || tok(next(v)).is("++") || tok(next(v)).is("--") ||
           tok(prev(v)).is("++") || tok(prev(v)).is("--")))
        ++assignments;
    if (assignments != 1) return false;
    const std::size_t at = element_of(t);
    if (at >= elements_.size()) return false;
    // The headers around it: walk back over blocks as guards_at does.
    if (k_.elements[elements_[at]].braceless_body) {
      const std::size_t h = prev_element(at);
      if (h < elements_.size() && k_.elements[elements_[h]].kind == ElementKind::LoopHeader) return false;
    }
    int depth = 0;
    for (std::size_t i = at; i-- > 0;) {
      const grammar::Element& el = k_.elements[elements_[i]];
      if (el.kind == ElementKind::BlockClose) ++depth;
      if (el.kind != ElementKind::BlockOpen) continue;
      if (depth > 0) {
        --depth;
        continue;
      }
      const std::size_t h = prev_element(i);
      if (h < elements_.size() && k_.elements[elements_[h]].kind == ElementKind::LoopHeader) return false;
    }
    return true;
  }

  struct HelperCall {
    const grammar::Function* helper = nullptr;
    std::size_t parameter = 0;          // which of its parameters the pointer is
    std::vector<Span> arguments;        // the call's argument tokens
  };

  // The call of a __device__ helper with a body whose argument is exactly
  // the name at `t` (`f(a, p, n)`), passed as one of its pointer parameters.
  std::optional<HelperCall> helper_call(std::size_t t) const { return helper_call(t, t); }

  // The call of a __device__ helper whose whole argument is tokens first..last
  // (`&p[i]` as well as `p`), at a pointer parameter of the helper.
  std::optional<HelperCall> helper_call(std::size_t first, std::size_t last) const {
    const std::size_t t = first, p = prev(first), n = next(last);
    if (!(tok(p).is("(") || tok(p).is(",")) || !(tok(n).is(",") || tok(n).is(")"))) return std::nullopt;
    std::size_t open = p;
    for (int depth = 0; open > body_first_; open = prev(open)) {
      if (tok(open).is(")") || tok(open).is("]")) ++depth;
      if ((tok(open).is("(") || tok(open).is("[")) && depth-- == 0) break;
    }
    if (!tok(open).is("(")) return std::nullopt;
    std::size_t callee = prev(open);
    if (tok(callee).is(">"))  // f<float>(...): the name before the template arguments
      for (int depth = 0; callee > body_first_; callee = prev(callee)) {
        if (tok(callee).is(">")) ++depth;
        if (tok(callee).is("<") && --depth == 0) {
          callee = prev(callee);
          break;
        }
      }
    if (tok(callee).kind != TokenKind::Identifier) return std::nullopt;
    const std::size_t close = matching(open);
    if (close <= next(open)) return std::nullopt;
    HelperCall call;
    call.arguments = split(k_.tokens, next(open), prev(close), ",");
    for (std::size_t a = 0; a < call.arguments.size(); ++a)
      if (call.arguments[a].first <= t && t <= call.arguments[a].second) call.parameter = a;
    for (const auto& f : k_.functions)
      if (f.name == tok(callee).text && !f.is_kernel && f.block >= 0 && f.params.size() == call.arguments.size() &&
          (f.params[call.parameter].pointer || f.params[call.parameter].texture_object()) && &f != &f_)
        call.helper = &f;
    if (!call.helper) return std::nullopt;
    return call;
  }

  // The helper's accesses through its parameter, its integer parameters
  // standing for the call's arguments (their ranges at the call), joined
  // to the buffer's own.
  void follow_into_helper(PointerUse& u, const HelperCall& call, std::size_t t, const Offsets& offsets) {
    const int line = tok(t).line;
    if (u.first_line == 0) u.first_line = line;
    const std::string where = "line " + std::to_string(line) + ": " + call.helper->name + "(..., " + u.name + ", ...)";
    if (helper_depth_ >= 4) {
      if (u.refusal.empty()) u.refusal = where + ": helpers nest too deep";
      u.count.reset();
      u.read = u.written = true;
      return;
    }
    Analyser sub(k_, *call.helper, symbols_, true);
    sub.helper_depth_ = helper_depth_ + 1;
    const std::size_t at = element_of(t);
    const auto guards = at < elements_.size() ? guards_at(at) : std::map<std::string, Bound>{};
    for (std::size_t i = 0; i < call.helper->params.size(); ++i) {
      if (call.helper->params[i].pointer || call.helper->params[i].texture_object()) continue;
      std::string ignored;
      const auto e = parse(call.arguments[i].first, call.arguments[i].second);
      sub.arguments_[call.helper->params[i].name] = e ? eval(*e, guards, ignored) : std::nullopt;
    }
    const PointerUse inner = sub.pointer_use(call.helper->params[call.parameter].name);
    if (inner.unused) return;  // the helper never touches it
    u.read = u.read || inner.read;
    u.written = u.written || inner.written;
    u.store_reaches_zero = u.store_reaches_zero || inner.store_reaches_zero;
    if (!inner.texture_type.empty()) fetched_as(u, inner.texture_type);
    if (!inner.atomic.empty()) {
      u.atomic = !u.atomic.empty() && u.atomic != inner.atomic ? "other" : inner.atomic;
      if (u.atomic_where.empty()) u.atomic_where = where + ", " + inner.atomic_where;
    }
    if (!inner.count || !inner.refusal.empty()) {
      if (u.refusal.empty()) u.refusal = where + ", in " + call.helper->name + ": " + inner.refusal;
      u.count.reset();
      return;
    }
    SymbolicSize need = *inner.count;
    std::string evidence = where + guards_text(guards) + "; in " + call.helper->name + ": " + inner.count_evidence;
    if (!offsets.empty()) {
      // The alias's start plus the helper's need.
      std::string why, text;
      const auto start = start_of(offsets, guards, text, why);
      if (!start || !start->hi || !start->lo.non_negative_for_sizes()) {
        if (u.refusal.empty())
          u.refusal = where + ": its start '" + text + "': " + (why.empty() ? "may be negative or unbounded" : why);
        u.count.reset();
        return;
      }
      need = need + *start->hi;
      evidence = where + ", '" + u.name + "' advanced by " + text + guards_text(guards) + "; in " +
                 call.helper->name + ": " + inner.count_evidence;
    }
    add_need(u, need, evidence);
  }

  PointerUse pointer_use(const std::string& name) {
    PointerUse u;
    u.name = name;
    scan(u, name, Offsets{});
    if (u.first_line == 0 && u.refusal.empty()) {
      // Named nowhere in the body nor in a macro (which could use it where
      // expanded): no element is touched, and one is enough to pass.
      if (named_in_a_macro(name)) {
        u.refusal = "the kernel body never names '" + name + "', but a macro does";
      } else {
        u.unused = true;
        u.count = SymbolicSize::constant(1);
        u.count_evidence = "the kernel never uses '" + name + "': one element is enough to pass";
      }
    }
    return u;
  }

  // The accesses through `name` (the parameter, or an alias of it that starts
  // `offset` elements in).
  void scan(PointerUse& u, const std::string& name, const Offsets& offsets, std::size_t from = 0) {
    for (std::size_t t = std::max(from, body_first_); t <= body_last_; ++t) {
      if (tok(t).kind != TokenKind::Identifier || tok(t).text != name) continue;
      const std::size_t p = prev(t), n = next(t);
      if (tok(p).is(".") || tok(p).is("->")) continue;
      // The alias's own declarator (`float* q = ...`), not a store `*q = v;`.
      if (!offsets.empty() && tok(p).is("*") && tok(n).is("=") && tok(prev(p)).kind == TokenKind::Identifier) continue;
      if (tok(n).is("[") && tok(next(n)).is("]")) continue;        // `extern __shared__ float s[];`
      // tex1Dfetch<T>(name, i): a texture object's element i, of type T.
      if (const auto fetch = texture_fetch_type(p); fetch && tok(n).is(",")) {
        u.read = true;
        fetched_as(u, *fetch);
        const std::size_t close = matching(p);
        access(u, t, std::make_pair(next(n), prev(close)), offsets);
        continue;
      }
      // `p += e;`, p's only assignment and in no loop: from there on p's
      // accesses are e further in (as through an alias `q = p + e`).
      if (offsets.empty() && tok(n).is("+=") && advanced_once(t)) {
        const std::size_t end = expression_end(next(n));
        scan(u, name, Offsets{Span{next(n), end}}, next(end));
        return;
      }
      // `const float* q = p + e;`: q's accesses are p's, e further in.
      if (tok(n).is("+") && declares_alias(p)) {
        const std::size_t end = expression_end(next(n));
        scan(u, tok(prev(p)).text, with_offset(offsets, Span{next(n), end}));
        t = end;
        continue;
      }
      // `&p[e]` not as an atomic's address: `float* q = &p[e];` is an alias
      // as `q = p + e` is; any other use of the address (a call, an
      // assignment) leaves where it is read or written unknown.
      if (tok(p).is("&") && tok(n).is("[") &&
          !(tok(prev(p)).is("(") && !atomic_kind(tok(prev(prev(p))).text).empty())) {
        const std::size_t close = matching(n), assign = prev(p);
        if (declares_alias(assign) && (tok(next(close)).is(";") || tok(next(close)).is(","))) {
          scan(u, tok(prev(assign)).text, with_offset(offsets, Span{next(n), prev(close)}));
          t = close;
          continue;
        }
        // helper(..., &p[e], ...): the helper's accesses, e further in (as through an alias).
        if (const auto call = helper_call(p, close)) {
          follow_into_helper(u, *call, t, with_offset(offsets, Span{next(n), prev(close)}));
          t = close;
          continue;
        }
        not_followed(u, t, "its element's address is taken (&" + name + "[" +
                               expression_text(k_.tokens, *parse(next(n), prev(close))) +
                               "]), and gi does not follow where it is used");
        t = close;
        continue;
      }
      if (tok(n).is("[")) {
        const std::size_t close = matching(n);
        // `p[i].x += v`: what happens to the element is after its members.
        std::size_t after = next(close);
        bool member = false;
        while (after <= body_last_ && (tok(after).is(".") || tok(after).is("->") || tok(after).is("["))) {
          after = tok(after).is("[") ? next(matching(after)) : next(next(after));
          member = true;
        }
        const bool assigned = after <= body_last_ && kAssignments.count(tok(after).text);
        const bool step = (after <= body_last_ && (tok(after).is("++") || tok(after).is("--"))) || tok(p).is("++") ||
                          tok(p).is("--");
        // &p[i] as an atomic's address: atomicAdd(&p[i], v)
        if (tok(p).is("&") && tok(prev(p)).is("(") && !atomic_kind(tok(prev(prev(p))).text).empty()) {
          set_atomic(u, atomic_kind(tok(prev(prev(p))).text), prev(prev(p)));
        } else if (assigned && tok(after).is("=") && !member) {
          u.written = true;
        } else if (assigned || step) {  // a member stored keeps the element's others: inout
          u.read = u.written = true;
        } else {
          u.read = true;
        }
        access(u, t, std::make_pair(next(n), prev(close)), offsets, assigned && tok(after).is("=") && !member);
        continue;
      }
      // atomicOp(p, v) or atomicOp(p + i, v), a CAS helper's pointer argument.
      if (tok(p).is("(") && !atomic_kind(tok(prev(p)).text).empty()) {
        set_atomic(u, atomic_kind(tok(prev(p)).text), prev(p));
        if (tok(n).is(",")) {
          access(u, t, std::nullopt, offsets);
          continue;
        }
        if (tok(n).is("+")) {
          access(u, t, std::make_pair(next(n), expression_end(next(n))), offsets);
          continue;
        }
      }
      // *(p + i), as older kernels write p[i]
      if (tok(p).is("(") && tok(prev(p)).is("*") && tok(n).is("+")) {
        const std::size_t close = matching(p);
        const std::size_t after = next(close);
        const bool assigned = after <= body_last_ && kAssignments.count(tok(after).text);
        if (assigned) u.written = true;
        if (!assigned || !tok(after).is("=")) u.read = true;
        access(u, t, std::make_pair(next(n), prev(close)), offsets, assigned && tok(after).is("="));
        continue;
      }
      // *p = v / *p
      if (tok(p).is("*") && (tok(prev(p)).kind == TokenKind::Punct && !tok(prev(p)).is(")") && !tok(prev(p)).is("]"))) {
        if (kAssignments.count(tok(n).text)) u.written = true;
        if (!tok(n).is("=")) u.read = true;
        access(u, t, std::nullopt, offsets);
        continue;
      }
      // f(..., p, ...): the accesses of a __device__ helper through its parameter.
      if (const auto call = helper_call(t)) {
        follow_into_helper(u, *call, t, offsets);
        continue;
      }
      not_followed(u, t, "'" + name + "' is used as a pointer (" + tok(p).text + " " + name + " " + tok(n).text +
                             "), not indexed");
    }
  }

  // `assign` is the `=` of a pointer declaration, `T* q = ...`: q is an alias.
  bool declares_alias(std::size_t assign) const {
    return tok(assign).is("=") && tok(prev(assign)).kind == TokenKind::Identifier && tok(prev(prev(assign))).is("*") &&
           k_.elements[elements_[std::min(element_of(assign), elements_.size() - 1)]].kind == ElementKind::Declaration;
  }

  // A use of the buffer at token `t` gi does not follow: no count, and since
  // it may read or write there, inout; the first such use's reason is kept.
  void not_followed(PointerUse& u, std::size_t t, const std::string& why) const {
    if (u.first_line == 0) u.first_line = tok(t).line;
    if (u.refusal.empty()) u.refusal = "line " + std::to_string(tok(t).line) + ": " + why;
    u.count.reset();
    u.read = u.written = true;
  }
};

}  // namespace

int integer_vector_size(const std::string& type) {
  static const std::map<std::string, int> sizes{{"int2", 2}, {"int3", 3}, {"int4", 4},
                                                {"uint2", 2}, {"uint3", 3}, {"uint4", 4}};
  const auto it = sizes.find(type);
  return it == sizes.end() ? 0 : it->second;
}

std::string exact_launch_variable(int axis) { return std::string("threads_") + "xyz"[axis]; }

const int kFixedBlock = 256;

std::string vector_component_name(const std::string& vector, char field) { return vector + "_" + field; }

ParameterUse analyse_parameter_use(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                                   const IncludedHeaders& headers, const std::map<int, std::string>& exact_names) {
  // The macros in force where the kernel starts: a later #define is not its.
  const FileSymbols symbols = file_symbols(k, headers, k.tokens[kernel.name_token].line);
  Analyser a(k, kernel, symbols);
  for (const auto& [axis, name] : exact_names) a.exact_names_[axis] = name;
  return a.run();
}

}  // namespace gi::analysis

// analyse_parameter_use and the other entry points of analysis/parameter_use.hpp;
// the Analyser's (analysis/parameter_use_analyser.hpp) constructor and run(),
// which ties the parts together, and what they all read: a local's one
// definition, the global thread index a local or expression is, an integer
// vector's or __constant__'s sizes, the dynamic shared array.
#include "analysis/parameter_use.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/block_index_use.hpp"
#include "analysis/cas_helpers.hpp"
#include "analysis/expression.hpp"
#include "analysis/file_symbols.hpp"
#include "analysis/parameter_use_analyser.hpp"
#include "analysis/thread_index.hpp"
#include "analysis/token_ranges.hpp"
#include "grammar/record_type.hpp"

namespace gi::analysis {
namespace detail {

Analyser::Analyser(const grammar::ParsedKernel& k, const grammar::Function& f, const FileSymbols& symbols, bool helper)
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
    // A struct by value: each int or unsigned member of its own is a size.
    std::string why;
    if (!p.pointer && !p.texture_object() && !helper && integer_vector_size(p.base_type) == 0)
      if (const auto r = grammar::find_record_type(k.tokens, symbols.header_files.get(), p.base_type, why))
        for (std::size_t m = 0; m < r->layout.size(); ++m)
          if (r->layout[m] == "int" || r->layout[m] == "unsigned") record_sizes_[p.name].insert(r->members[m]);
  }
  if (!helper) helpers_ = find_cas_helpers(k);
  // An integer __constant__ scalar is a size as a scalar parameter is: the
  // spec sets it ("constants"), in the kernel and in every helper alike.
  for (const auto& [name, c] : symbols_.constant_variables) {
    if (is_integer_constant(c)) scalars_.insert(name);
    if (!c.array && integer_vector_size(c.type) > 0) vectors_[name] = integer_vector_size(c.type);
  }
  for (std::size_t t = body_first_; t < body_last_; t = next(t))
    if (tok(t).is("threadIdx") && tok(next(t)).is(".") && (tok(next(next(t))).is("y") || tok(next(next(t))).is("z")))
      reads_thread_yz_ = true;
  collect_definitions();
  collect_bound_definitions();
  collect_real_names();
  collect_real_sizes();
}

ParameterUse Analyser::run() {
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
  note_tested_values(out.pointers);
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
  out.static_shared = static_shared_arrays();
  out.real_sizes = real_scalars_;
  for (const auto& [name, n] : real_vectors_)
    for (int i = 0; i < n; ++i) out.real_sizes.insert(vector_component_name(name, "xyzw"[i]));
  return out;
}

// The kernel body's one-dimensional `__shared__ T name[E];` arrays with a
// whole-number E, each with its accesses over the block size B.
std::vector<StaticShared> Analyser::static_shared_arrays() {
  std::vector<StaticShared> out;
  for (std::size_t e : elements_) {
    const grammar::Element& el = k_.elements[e];
    if (el.kind != ElementKind::Declaration) continue;
    bool shared = false;
    for (std::size_t t = el.tokens.first; t <= el.tokens.last; t = next(t)) {
      if (tok(t).is("__shared__")) shared = true;
      if (!shared || tok(t).kind != TokenKind::Identifier || !tok(next(t)).is("[")) continue;
      const std::size_t open = next(t), close = matching(open);
      if (tok(next(close)).is("[") || close == next(open)) break;  // two dimensions, or `[]`
      const auto extent = whole_value(next(open), prev(close));
      if (!extent) break;
      StaticShared s;
      s.name = tok(t).text;
      s.extent = *extent;
      s.line = tok(t).line;
      declarator_ = t;
      block_symbols_ = true;
      s.use = pointer_use(s.name);
      block_symbols_ = false;
      declarator_ = static_cast<std::size_t>(-1);
      out.push_back(std::move(s));
      break;
    }
  }
  return out;
}

// A whole number the tokens spell: a literal, a whole-number macro, or a
// `const`/`constexpr` integer the file defines by a literal (`constexpr int
// kReduceThreads = 256;`).
std::optional<long long> Analyser::whole_value(std::size_t first, std::size_t last) const {
  if (const auto e = parse(first, last)) {
    std::string why;
    if (const auto r = eval(*e, {}, why); r && r->hi && r->lo == *r->hi && r->lo.is_constant())
      return r->lo.constant_part();
  }
  if (first != last || tok(first).kind != TokenKind::Identifier) return std::nullopt;
  const std::string& name = tok(first).text;
  for (std::size_t t = 1; t + 3 < k_.tokens.size(); ++t) {
    if (!tok(t).is(name) || !tok(t + 1).is("=") || tok(t + 2).kind != TokenKind::Number || !tok(t + 3).is(";")) continue;
    bool constant = false;  // `const int`, `constexpr unsigned int`, `static const int`
    for (std::size_t b = t; b-- > 0 && b + 4 > t;) constant = constant || tok(b).is("const") || tok(b).is("constexpr");
    if (!constant) continue;
    try {
      return std::stoll(tok(t + 2).text);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The expression with each local that only names a built-in
// (`int bx = blockIdx.x;`, assigned nowhere else) replaced by it:
// `blockDim.x * bx + tx` is the global index as much as its spelled-out form.
Expr Analyser::with_thread_locals(const Expr& e, int depth) const {
  if (e.kind == ExprKind::Name && assigned_once_.count(e.text) && depth < 8)
    if (auto d = definition(e.text)) {
      Expr inner = with_thread_locals(*d, depth + 1);
      if (only_builtins(inner)) return inner;
    }
  if (e.kind == ExprKind::Member && depth < 8)  // `p.x` of `int2 p = make_int2(blockIdx.x * ..., ...)`
    if (const auto c = component_definition(e)) {
      Expr inner = with_thread_locals(*c, depth + 1);
      if (only_builtins(inner)) return inner;
    }
  Expr out = e;
  for (Expr& c : out.children) c = with_thread_locals(c, depth);
  return out;
}

// threadIdx, blockIdx, blockDim, gridDim members joined by + and *:
// `blockIdx.x + gridDim.x * blockIdx.y` (a block number), `threadIdx.x`.
bool Analyser::only_builtins(const Expr& e) {
  for (const char* builtin : {"threadIdx", "blockIdx", "blockDim", "gridDim"})
    if (member_axis(e, builtin) >= 0) return true;
  if (e.kind != ExprKind::Binary || (e.text != "+" && e.text != "*") || e.children.size() != 2) return false;
  return only_builtins(e.children[0]) && only_builtins(e.children[1]);
}

// Whether the expression reads threadIdx or blockIdx (following locals).
bool Analyser::from_thread_index(const Expr& e, int depth) const {
  if (depth > 16) return false;
  if (member_axis(e, "threadIdx") >= 0 || member_axis(e, "blockIdx") >= 0) return true;
  if (e.kind == ExprKind::Name)
    if (const auto d = definition(e.text)) return from_thread_index(*d, depth + 1);
  if (const auto c = component_definition(e)) return from_thread_index(*c, depth + 1);
  for (const Expr& c : e.children)
    if (from_thread_index(c, depth)) return true;
  return false;
}

// Whether the expression from `from` to its end is blockDim.x * gridDim.x.
bool Analyser::adds_grid_stride(std::size_t from) const {
  const auto e = parse(from, expression_end(from));
  return e && is_grid_stride(*e);
}

void Analyser::collect_definitions() {
  std::map<std::string, int> assigned, increments;
  for (std::size_t t = body_first_; t <= body_last_; ++t) {
    if (tok(t).kind != TokenKind::Identifier) continue;
    const std::size_t n = next(t);
    const bool assigns = n <= body_last_ && (kAssignments.count(tok(n).text) || tok(n).is("++") || tok(n).is("--"));
    const std::size_t p = prev(t);
    if (tok(p).is(".") || tok(p).is("->")) {  // `g[i].x = v` assigns a member, not a local x
      // `p.x += 1`: p's components are no longer its definition's.
      const std::size_t object = prev(p);
      if (tok(p).is(".") && tok(object).kind == TokenKind::Identifier &&
          (assigns || tok(prev(object)).is("++") || tok(prev(object)).is("--")))
        components_assigned_.insert(tok(object).text);
      continue;
    }
    if (assigns || tok(p).is("++") || tok(p).is("--")) ++assigned[tok(t).text];
    // x++, ++x, x += <whole number>, x += blockDim.x * gridDim.x (a
    // grid-stride loop's step): the value only grows.
    const bool grows = tok(n).is("++") || tok(p).is("++") ||
                       (tok(n).is("+=") && tok(next(n)).kind == TokenKind::Number &&
                        tok(next(n)).text.find_first_not_of("0123456789uUlL") == std::string::npos &&
                        (tok(next(next(n))).is(";") || tok(next(next(n))).is(")"))) ||
                       (tok(n).is("+=") && adds_grid_stride(next(n)));
    if (grows) ++increments[tok(t).text];
    else if (tok(n).is("+=") && next(n) <= body_last_)
      sized_steps_[tok(t).text].push_back({next(n), expression_end(next(n))});
  }
  assigned_count_ = assigned;
  for (std::size_t e : elements_) {
    const grammar::Element& el = k_.elements[e];
    if (el.kind != ElementKind::Declaration && !(el.kind == ElementKind::LoopHeader && el.is_for)) continue;
    // `T name = expr;`, each declarator of `T y = e1, z = e2;`, or a for's
    // init `int c = expr` (its first declarator only).
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
      else if (const auto steps = sized_steps_.find(name);
               assigned[name] - 1 == increments[name] + (steps == sized_steps_.end() ? 0 : static_cast<int>(steps->second.size())))
        starts_[name] = {start, end};
      if (el.kind == ElementKind::LoopHeader || !tok(next(end)).is(",")) break;
      t = end;  // the next declarator follows its comma
    }
  }
  collect_late_definitions(assigned);
}

// `int tid; ... tid = bx * NUMBER_THREADS + tx;` (Rodinia's myocyte): a
// local declared without a value and assigned once, by a statement of its
// own in the declaration's block (not a braceless if's or loop's body),
// before anything else names it. That statement is its definition, as
// `int tid = ...;` would be: no branch or loop stands between the two, so
// every read sees that value.
void Analyser::collect_late_definitions(const std::map<std::string, int>& assigned) {
  std::map<std::string, std::size_t> declared;  // name -> its declaration's element
  for (std::size_t i = 0; i < elements_.size(); ++i) {
    const grammar::Element& el = k_.elements[elements_[i]];
    if (el.kind == ElementKind::Declaration) {
      for (std::size_t t = el.tokens.first; t <= el.tokens.last; ++t)
        if (tok(t).kind == TokenKind::Identifier && (tok(next(t)).is(";") || tok(next(t)).is(",")) &&
            !definitions_.count(tok(t).text))
          declared[tok(t).text] = i;
      continue;
    }
    if (el.kind != ElementKind::Statement || tok(el.tokens.first).kind != TokenKind::Identifier ||
        !tok(next(el.tokens.first)).is("="))
      continue;
    const std::string name = tok(el.tokens.first).text;
    const auto d = declared.find(name);
    const auto count = assigned.find(name);
    // A braceless if's, else's or loop's body, or a case's: it may not run.
    const std::size_t before = prev_element(i);
    const bool after_case = before < elements_.size() && k_.elements[elements_[before]].kind == ElementKind::CaseLabel;
    if (d == declared.end() || count == assigned.end() || count->second != 1 ||
        k_.elements[elements_[d->second]].block != el.block || el.braceless_body || after_case)
      continue;
    // Nothing between the declaration and this statement names it.
    bool named = false;
    for (std::size_t t = k_.elements[elements_[d->second]].tokens.last + 1; t < el.tokens.first && !named; ++t)
      named = tok(t).is(name);
    if (named) continue;
    const std::size_t start = next(next(el.tokens.first));
    const std::size_t end = std::min(expression_end(start), el.tokens.last);
    definitions_[name] = {start, end};
    assigned_once_.insert(name);
    declared.erase(d);
  }
}

// Axis of a global thread index expression (analysis/thread_index.hpp),
// or of blockIdx.y / blockIdx.z alone (a block row per item: the spec's
// blocks are B x 1 x 1, so that is one item per grid row); -1 otherwise.
// The flattened 2-D form is noted: it holds on a grid of one row only.
int Analyser::global_index_axis(const Expr& e) const {
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

// The integer vector a local copies (`const int3 dim = c_Dim;`, assigned
// nowhere else): its components are the vector's sizes. Else the name.
std::string Analyser::vector_behind(const std::string& name, int depth) const {
  if (const auto a = vector_arguments_.find(name); a != vector_arguments_.end()) return a->second;
  if (vectors_.count(name) || real_vectors_.count(name) || depth > 4 || !assigned_once_.count(name)) return name;
  const auto d = definition(name);
  return d && d->kind == ExprKind::Name ? vector_behind(d->text, depth + 1) : name;
}

// `v.x` of one of `vectors` (by-value vectors: name -> components), or of
// a local that only copies one (vector_behind): its workload variable.
std::optional<std::string> Analyser::component_size(const Expr& member,
                                                    const std::map<std::string, int>& vectors) const {
  if (member.kind != ExprKind::Member || member.text != "." || member.children.size() != 1 ||
      member.children[0].kind != ExprKind::Name || member.field.size() != 1)
    return std::nullopt;
  const auto v = vectors.find(vector_behind(member.children[0].text));
  const std::size_t axis = std::string("xyzw").find(member.field[0]);
  if (v == vectors.end() || axis == std::string::npos || static_cast<int>(axis) >= v->second) return std::nullopt;
  return vector_component_name(v->first, member.field[0]);
}

std::optional<Expr> Analyser::definition(const std::string& name) const {
  if (const auto b = bound_definitions_.find(name); b != bound_definitions_.end()) return b->second;
  const auto it = definitions_.find(name);
  if (it == definitions_.end()) return std::nullopt;
  return parse(it->second.first, it->second.second);
}

std::optional<Expr> Analyser::component_definition(const Expr& member) const {
  if (member.kind != ExprKind::Member || member.text != "." || member.children.size() != 1 ||
      member.children[0].kind != ExprKind::Name || member.field.size() != 1)
    return std::nullopt;
  const std::size_t axis = std::string("xyzw").find(member.field[0]);
  const std::string& name = member.children[0].text;
  const auto d = definitions_.find(name);
  if (axis == std::string::npos || d == definitions_.end() || !assigned_once_.count(name) ||
      components_assigned_.count(name))
    return std::nullopt;
  const auto [first, last] = d->second;
  if (tok(first).is("{")) {  // `const int2 p = {e0, e1};`
    if (matching(first) != last || next(first) >= last) return std::nullopt;
    const auto parts = split(k_.tokens, next(first), prev(last), ",");
    if (axis >= parts.size() || parts[axis].first > parts[axis].second) return std::nullopt;
    return parse(parts[axis].first, parts[axis].second);
  }
  // `make_int2(e0, e1)`, `make_float3(...)`: the vector types' constructors.
  const auto e = parse(first, last);
  if (!e || e->kind != ExprKind::Call || e->callee().rfind("make_", 0) != 0 || axis + 1 >= e->children.size())
    return std::nullopt;
  return e->children[axis + 1];
}

bool Analyser::is_integer_constant(const grammar::ConstantVariable& c) {
  static const std::set<std::string> integer{"int", "signed", "signed int", "unsigned", "unsigned int",
                                             "int32_t", "uint32_t", "long", "unsigned long", "long long",
                                             "unsigned long long", "size_t", "int64_t", "uint64_t"};
  return !c.array && integer.count(c.type) > 0;
}

// Why a name from outside the kernel gives no value: a __constant__
// variable a spec cannot set as a size ("" for any other name).
std::string Analyser::constant_refusal(const std::string& name) const {
  const auto c = symbols_.constant_variables.find(name);
  if (c == symbols_.constant_variables.end() || is_integer_constant(c->second) || vectors_.count(name)) return "";
  return "'" + name + "' is a __constant__ " + c->second.type + (c->second.array ? " array" : "") + " (line " +
         std::to_string(c->second.line) +
         "): a spec sets no array constants, and only an int or unsigned one (or an integer vector's component) is a size";
}

// The kernel's `extern __shared__ T name[];` (in its body or the file's):
// its name and T.
std::optional<std::pair<std::string, std::string>> Analyser::dynamic_shared_array() const {
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

}  // namespace detail

int integer_vector_size(const std::string& type) {
  static const std::map<std::string, int> sizes{{"int2", 2},       {"int3", 3},      {"int4", 4},
                                                {"uint2", 2},      {"uint3", 3},     {"uint4", 4},
                                                {"long2", 2},      {"ulong2", 2},    {"longlong2", 2},
                                                {"ulonglong2", 2}};
  const auto it = sizes.find(type);
  return it == sizes.end() ? 0 : it->second;
}

std::string exact_launch_variable(int axis) { return std::string("threads_") + "xyz"[axis]; }

const int kFixedBlock = 256;

std::string vector_component_name(const std::string& vector, char field) { return vector + "_" + field; }

std::string record_member_name(const std::string& record, const std::string& member) { return record + "_" + member; }

ParameterUse analyse_parameter_use(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                                   const IncludedHeaders& headers, const std::map<int, std::string>& exact_names) {
  // The macros in force where the kernel starts: a later #define is not its.
  const FileSymbols symbols = file_symbols(k, headers, k.tokens[kernel.name_token].line);
  detail::Analyser a(k, kernel, symbols);
  for (const auto& [axis, name] : exact_names) a.exact_names_[axis] = name;
  ParameterUse out = a.run();
  WorkItem& w = out.work;
  if (!w.bound[0] && !w.bound[1] && !w.bound[2] && w.written_block == 0 && w.fixed_block_line == 0) {
    const OneBlock one = one_block_kernel(k, kernel, headers);
    if (one.one_block) w.one_block_evidence = one.evidence;
    else if (w.refusal.empty()) w.refusal = one.why_not;
  }
  return out;
}

}  // namespace gi::analysis

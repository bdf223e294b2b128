// The Analyser's access scanner (analysis/parameter_use_analyser.hpp): each
// use of a pointer (p[i], *(p + i), atomics, texture fetches), through
// aliases (q = p + e, &p[e], p += e) and into __device__ helpers; whether it
// is read, written or atomic, and the element count its indices need.
// Views of it as another type are in analysis/parameter_use_views.cpp.
#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/aggregate_sites.hpp"
#include "analysis/expression.hpp"
#include "analysis/parameter_use_analyser.hpp"
#include "analysis/token_ranges.hpp"

namespace gi::analysis::detail {

namespace {

// Whether sizes alone can keep `lowest` >= 0: it names a size, and it is
// >= 0 wherever every size is large, whatever their order (bins - 2): at
// 1024 each, and at distinct values rising and falling in name order. A
// negative number (`in[i - 1]` from i = 0) no size changes; `n - 2 * m`,
// or `ny - ceil_div(n, nx) * ny` (n <= nx), would tie sizes to each other
// on every workload, which gi leaves to the user.
bool sizes_can_keep(const SymbolicSize& lowest) {
  if (lowest.is_constant()) return false;
  const std::vector<std::string> names = lowest.names();
  for (int order : {0, 1, -1}) {
    std::map<std::string, double> large;
    for (std::size_t i = 0; i < names.size(); ++i)
      large[names[i]] = 1024 + order * 37.0 * static_cast<double>(i);
    const auto v = lowest.evaluate(large);
    if (!v || *v < 0) return false;
  }
  return true;
}

}  // namespace

// Whether the expression (following locals) reads memory: an index from data.
bool Analyser::loads(const Expr& e, int depth) const {
  std::set<std::string> seen;
  return loads(e, depth, seen);
}

bool Analyser::loads(const Expr& e, int depth, std::set<std::string>& seen) const {
  if (depth > 16) return false;
  if (e.kind == ExprKind::Index) return true;
  if (e.kind == ExprKind::Unary && e.text == "*") return true;
  if (is_texture_fetch(e)) return true;
  if (const auto c = component_definition(e)) return loads(*c, depth + 1, seen);
  if (e.kind == ExprKind::Name) {
    if (!seen.insert(e.text).second) return false;  // `j = j + 1`: followed already
    if (const auto d = definition(e.text)) return loads(*d, depth + 1, seen);
    // Assigned more than once (`int j = idx[i]; if (j < 0) j = 0;`, CFD's
    // neighbour `nb = elements_surrounding_elements[...]` in a loop): any
    // value it is given that loads. This only names why there is no count.
    for (std::size_t t = body_first_; t <= body_last_; ++t)
      if (tok(t).kind == TokenKind::Identifier && tok(t).text == e.text && tok(next(t)).is("=") &&
          !tok(prev(t)).is(".") && !tok(prev(t)).is("->"))
        if (const auto v = parse(next(next(t)), expression_end(next(next(t)))); v && loads(*v, depth + 1, seen))
          return true;
  }
  for (const Expr& c : e.children)
    if (loads(c, depth, seen)) return true;
  return false;
}

// tex1Dfetch(t, i), tex2D<float>(t, x, y), ...: a load through a texture.
bool Analyser::is_texture_fetch(const Expr& e) {
  if (e.kind != ExprKind::Call || e.children.empty()) return false;
  // The parser keeps a fetch's template argument in the callee's name
  // (`tex1Dfetch<float4>`, analysis/expression.hpp).
  const std::string name = e.callee();
  return name.rfind("tex1D", 0) == 0 || name.rfind("tex2D", 0) == 0 || name.rfind("tex3D", 0) == 0 ||
         name.rfind("surf", 0) == 0;
}

// A texture fetched as `type`: fetched as two types, the spec cannot say ("?").
void Analyser::fetched_as(PointerUse& u, const std::string& type) {
  u.texture_type = u.texture_type.empty() || u.texture_type == type ? type : "?";
}

// The T of `tex1Dfetch<T>(` when token `open` is that call's parenthesis.
std::optional<std::string> Analyser::texture_fetch_type(std::size_t open) const {
  if (!tok(open).is("(")) return std::nullopt;
  const std::size_t close = prev(open);
  if (!tok(close).is(">")) return std::nullopt;
  const std::size_t type = prev(close), angle = prev(type);
  if (tok(type).kind != TokenKind::Identifier || !tok(angle).is("<") || !tok(prev(angle)).is("tex1Dfetch"))
    return std::nullopt;
  return tok(type).text;
}

unsigned Analyser::array_fetch_dimensions(std::size_t open, std::string& type) const {
  if (!tok(open).is("(") || !tok(prev(open)).is(">")) return 0;
  const std::size_t t = prev(prev(open)), angle = prev(t);
  if (tok(t).kind != TokenKind::Identifier || !tok(angle).is("<")) return 0;
  const std::string& callee = tok(prev(angle)).text;
  const unsigned dimensions = callee == "tex1D" ? 1 : callee == "tex2D" ? 2 : callee == "tex3D" ? 3 : 0;
  if (dimensions > 0) type = tok(t).text;
  return dimensions;
}

std::optional<SymbolicSize> Analyser::coordinate_extent(const Expr& c, const std::map<std::string, Bound>& guards,
                                                        bool& real, bool& normalized, std::string& why) {
  // `(x + 0.5f) / (float)nx` with x < nx: a normalised coordinate across nx.
  if (c.kind == ExprKind::Binary && c.text == "/" && c.children.size() == 2) {
    const Expr* divisor = &c.children[1];
    while (divisor->kind == ExprKind::Cast && !divisor->children.empty()) divisor = &divisor->children[0];
    std::string ignored;
    const auto d = eval(*divisor, guards, ignored);
    const auto a = eval(c.children[0], guards, ignored);
    if (d && d->hi && d->lo == *d->hi && !d->real && a && a->hi && (*d->hi - *a->hi).non_negative_for_sizes()) {
      normalized = true;
      real = true;
      return *d->hi;
    }
  }
  const auto r = eval(c, guards, why);
  if (!r || !r->hi) {
    if (why.empty()) why = "nothing bounds the coordinate '" + expression_text(k_.tokens, c) + "'";
    return std::nullopt;
  }
  if (r->real) real = true;
  // Texel floor(c): below hi for a real c < hi, at most hi otherwise.
  return r->real && r->strict ? *r->hi : *r->hi + SymbolicSize::constant(1);
}

bool Analyser::passed_as_reference(PointerUse& u, std::size_t name_token, std::size_t open) {
  if (!tok(open).is("(") || !tok(next(name_token)).is(")")) return false;
  const std::size_t close = prev(open), dim = prev(close), comma = prev(dim), type = prev(comma), angle = prev(type);
  if (!tok(close).is(">") || tok(dim).kind != TokenKind::Number || !tok(comma).is(",") ||
      tok(type).kind != TokenKind::Identifier || !tok(angle).is("<") || !tok(prev(angle)).is("texture"))
    return false;
  const unsigned dimensions = tok(dim).text == "1" ? 1 : tok(dim).text == "2" ? 2 : tok(dim).text == "3" ? 3 : 0;
  if (dimensions == 0) return false;
  u.read = true;
  fetched_as(u, tok(type).text);
  if (u.first_line == 0) u.first_line = tok(name_token).line;
  if (u.texture_dimensions != 0 && u.texture_dimensions != dimensions) {
    if (u.refusal.empty())
      u.refusal = "line " + std::to_string(tok(name_token).line) + ": '" + u.name + "' is read as a texture of " +
                  std::to_string(u.texture_dimensions) + " and of " + std::to_string(dimensions) + " dimensions";
  }
  u.texture_dimensions = dimensions;
  // The function it goes to: the call whose parenthesis encloses it.
  std::string callee = "a function";
  for (std::size_t t = prev(prev(angle)), depth = 0; t > body_first_; t = prev(t)) {
    if (tok(t).is(")")) ++depth;
    if (tok(t).is("(") && depth-- == 0) {
      if (tok(prev(t)).kind == TokenKind::Identifier) callee = "'" + tok(prev(t)).text + "'";
      break;
    }
  }
  u.texture_helper = callee;
  // Where it reads, and so the array's extent, is in that function, which
  // gi does not read (a header's template, as a rule).
  if (u.refusal.empty())
    u.refusal = "line " + std::to_string(tok(name_token).line) + ": '" + u.name + "' is passed to " + callee +
                ", which reads it where gi does not look";
  u.texture_extent.clear();
  u.count.reset();
  return true;
}

void Analyser::array_fetch(PointerUse& u, std::size_t name_token, std::size_t open, unsigned dimensions) {
  const int line = tok(name_token).line;
  if (u.first_line == 0) u.first_line = line;
  const auto refuse = [&](const std::string& why) {
    if (u.refusal.empty()) u.refusal = "line " + std::to_string(line) + ": " + why;
    u.texture_extent.clear();
    u.count.reset();
  };
  if (u.texture_dimensions != 0 && u.texture_dimensions != dimensions)
    return refuse("'" + u.name + "' is read as a texture of " + std::to_string(u.texture_dimensions) + " and of " +
                  std::to_string(dimensions) + " dimensions");
  const bool first_fetch = u.texture_dimensions == 0;
  u.texture_dimensions = dimensions;
  if (!u.refusal.empty()) return;
  const auto call = parse(prev(prev(prev(prev(open)))), matching(open));
  if (!call || call->kind != ExprKind::Call || call->children.size() != dimensions + 2)
    return refuse("gi cannot read the texture fetch through '" + u.name + "'");
  const auto found = access_guards(name_token);
  if (!found) return;
  const std::map<std::string, Bound>& guards = *found;
  std::vector<SymbolicSize> extent;
  bool normalized_any = false, plain_any = false;
  for (unsigned d = 0; d < dimensions; ++d) {
    const Expr& c = call->children[d + 2];
    bool real = false, normalized = false;
    std::string why;
    const auto e = coordinate_extent(c, guards, real, normalized, why);
    if (!e && loads(c)) {
      u.index_from_data = true;
      why = "it is computed from loaded data";
    }
    if (!e) return refuse("coordinate " + std::to_string(d + 1) + " of " + expression_text(k_.tokens, *call) + ": " + why);
    if (real) u.texture_real_coordinates = true;
    (normalized ? normalized_any : plain_any) = true;
    extent.push_back(*e);
  }
  if (normalized_any && plain_any)
    return refuse(expression_text(k_.tokens, *call) + " mixes normalised and plain coordinates, which no CUDA sampler reads");
  if (!first_fetch && u.texture_normalized != normalized_any)
    return refuse("'" + u.name + "' is read with normalised and with plain coordinates");
  u.texture_normalized = normalized_any;
  // Each dimension the larger of this fetch's and the earlier ones' where one provably is.
  for (unsigned d = 0; d < dimensions && !first_fetch; ++d) {
    if ((u.texture_extent[d] - extent[d]).non_negative_for_sizes()) extent[d] = u.texture_extent[d];
    else if (!(extent[d] - u.texture_extent[d]).non_negative_for_sizes())
      return refuse("the extent of '" + u.name + "' along " + "xyz"[d] + " is " + u.texture_extent[d].text() +
                    " at one fetch and " + extent[d].text() + " at another, neither provably the larger");
  }
  u.texture_extent = extent;
  SymbolicSize count = SymbolicSize::constant(1);
  std::string shape;
  for (const SymbolicSize& e : extent) {
    count = count * e;
    shape += (shape.empty() ? "" : " x ") + e.text();
  }
  u.count = count;
  u.count_evidence = "line " + std::to_string(line) + ": " + expression_text(k_.tokens, *call) + ", an array of " +
                     shape + guards_text(guards);
}

void Analyser::note_index_sources(const Expr& e, int depth) {
  if (depth > 16) return;
  if (e.kind == ExprKind::Index && !e.children.empty() && e.children[0].kind == ExprKind::Name)
    values_index_.insert(e.children[0].text);
  if (e.kind == ExprKind::Name)
    if (const auto d = definition(e.text)) note_index_sources(*d, depth + 1);
  if (const auto c = component_definition(e)) note_index_sources(*c, depth + 1);
  for (const Expr& c : e.children) note_index_sources(c, depth);
}

Analyser::Offsets Analyser::with_offset(Offsets chain, Span next) {
  chain.starts.emplace_back(next, chain.width);
  return chain;
}

// "4 * x", "4 * (y + 1)": a start or an index times its scale, as evidence reads it.
static std::string times_text(unsigned by, const std::string& text) {
  if (by == 1 || text == "0") return text;
  return std::to_string(by) + " * " + (text.find(' ') == std::string::npos ? text : "(" + text + ")");
}

// `r` times a whole number of elements (a start or an index in a wider view's units).
static Range scaled(Range r, unsigned by) {
  if (by == 1) return r;
  const SymbolicSize c = SymbolicSize::constant(by);
  r.lo = r.lo * c;
  if (r.hi) r.hi = *r.hi * c;
  return r;
}

// "; BLOCK_SIZE = 16 (line 3)" for each integer macro the index reads: the
// evidence for a number in the count.
std::string Analyser::macros_in(const std::optional<Span>& index) const {
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
std::optional<Range> Analyser::start_of(const Offsets& offsets, const std::map<std::string, Bound>& guards,
                                        std::string& text, std::string& why) const {
  Range sum{SymbolicSize(), SymbolicSize()};
  text.clear();
  for (const auto& [s, scale] : offsets.starts) {
    const auto o = parse(s.first, s.second);
    if (!o) {
      why = "gi cannot read the alias's start on line " + std::to_string(tok(s.first).line);
      return std::nullopt;
    }
    const std::string t = expression_text(k_.tokens, *o);
    text += (text.empty() ? "" : " + ") + times_text(scale, t);
    std::string owhy;
    const auto r = eval(*o, guards, owhy);
    if (!r) {
      why = "the alias's start '" + t + "': " + owhy;
      return std::nullopt;
    }
    sum = plus(sum, scaled(*r, scale));
  }
  return sum;
}

std::optional<std::map<std::string, Bound>> Analyser::access_guards(std::size_t token) {
  const std::size_t at = element_of(token);
  if (at >= elements_.size()) return std::nullopt;
  auto guards = guards_at(at);
  short_circuit_guards(at, token, guards);
  note_work_item(guards);
  return guards;
}

// An access at `token` with index tokens `index` (none: element 0), into
// the buffer at `offsets` past its start (an alias `q = p + offset`, or a chain of them).
void Analyser::access(PointerUse& u, std::size_t token, std::optional<Span> index, const Offsets& offsets, bool store) {
  const int line = tok(token).line;
  if (u.first_line == 0) u.first_line = line;
  const auto found = access_guards(token);
  if (!found) return;
  const std::map<std::string, Bound>& guards = *found;
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
  const std::optional<Range> own = r;  // the index alone, in the view's (or the parameter's) elements
  if (r && offsets.width != 1) {
    // Element i of a wider view covers the parameter's elements
    // [width * i, width * i + width - 1].
    text = times_text(offsets.width, text);
    r = scaled(*r, offsets.width);
    if (r->hi) r->hi = *r->hi + SymbolicSize::constant(offsets.width - 1);
  }
  if (r && !offsets.starts.empty()) {
    // The alias's start plus its own index.
    std::string start_text;
    const auto start = start_of(offsets, guards, start_text, why);
    text = text == "0" ? start_text : start_text + " + " + text;
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
          // A counter's step that may be negative says more than the guard
          // (one gi cannot bound says less: the guard's reason stands).
          const bool step = why.find("' steps by '") != std::string::npos &&
                            why.find("which may be negative") != std::string::npos;
          why = "the index '" + text + "': " + (step ? why : g->second.unreadable);
          break;
        }
  // Lowest where sizes alone keep it >= 0 (bins - 2): a fact every
  // workload keeps, and the access is counted.
  if (r && r->hi && !r->real && !r->lo.non_negative_for_sizes() && sizes_can_keep(r->lo))
    u.size_needs.push_back({"", 0, r->lo, "",
                            "line " + std::to_string(line) + ": " + u.name + "[" + text + "] reaches down to " +
                                r->lo.text() + guards_text(guards),
                            true});
  else if (!r || !r->hi || !r->lo.non_negative_for_sizes()) {
    if (r && r->hi) why = "the index '" + text + "' may be negative";
    if (u.refusal.empty()) u.refusal = "line " + std::to_string(line) + ": " + why;
    u.count.reset();
    return;
  }
  if (store && r->lo == SymbolicSize()) u.store_reaches_zero = true;
  if (store && offsets.empty() && index)
    if (const auto e = parse(index->first, index->second)) row_size_needs(u, *e, guards, line);
  if ((offsets.width != 1 || offsets.align != 1) && own && own->hi)
    view_size_needs(u, offsets, *own->hi, store, line);  // the view's own index: its part of the row
  const SymbolicSize need = *r->hi + SymbolicSize::constant(1);
  add_need(u, need, "line " + std::to_string(line) + ": " + u.name + "[" + text + "]" + guards_text(guards) +
                        macros_in(index), facts_of(guards));
}

// ", i < n (line 3); row < rows (line 2)": the guards an access is under.
std::string Analyser::guards_text(const std::map<std::string, Bound>& guards) {
  std::string out;
  for (const auto& [name, b] : guards) {
    if (name.rfind(kUnreadable, 0) == 0 || name.rfind(kLowerBound, 0) == 0 || name.rfind(kNotEqual, 0) == 0) continue;
    const std::string what = name.rfind(kGlobalIndex, 0) == 0 ? std::string("global index ") + "xyz"[name.back() - '0']
                             : name.rfind(kExpression, 0) == 0 ? name.substr(kExpression.size())
                                                               : name;
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
std::vector<SymbolicSize> Analyser::facts_of(const std::map<std::string, Bound>& guards) const {
  std::vector<SymbolicSize> out;
  for (const auto& [name, b] : guards) {
    if (name.rfind(kUnreadable, 0) == 0 || name.rfind(kLowerBound, 0) == 0 || name.rfind(kNotEqual, 0) == 0) continue;
    bool global = name.rfind(kGlobalIndex, 0) == 0;
    if (!global)
      if (const auto d = definition(name)) global = global_index_axis(*d) >= 0;
    if (global) out.push_back(b.limit - SymbolicSize::constant(1));
  }
  return out;
}

// Whether d >= 0 wherever the facts hold (each >= 0) and names are sizes:
// d itself, or d - m * f for one fact f and m = 1 or a name of d.
bool Analyser::follows(const SymbolicSize& d, const std::vector<SymbolicSize>& facts) {
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
void Analyser::add_need(PointerUse& u, const SymbolicSize& need, const std::string& evidence,
                        const std::vector<SymbolicSize>& facts) {
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

void Analyser::set_atomic(PointerUse& u, const std::string& kind, std::size_t call) {
  u.read = u.written = true;
  u.atomic = !u.atomic.empty() && u.atomic != kind ? "other" : kind;  // two kinds on one buffer: no identity
  if (u.atomic_where.empty()) u.atomic_where = "line " + std::to_string(tok(call).line) + ": " + tok(call).text;
}

std::string Analyser::atomic_kind(const std::string& function) const {
  if (const auto op = combinable_atomic(function)) return op->kind;
  if (function == "atomicSub") return "sub";
  if (const auto h = helpers_.find(function); h != helpers_.end()) return h->second.operation.kind;
  if (function.rfind("atomic", 0) == 0) return "other";
  return "";
}

bool Analyser::named_in_a_macro(const std::string& name) const {
  const std::regex word("\\b" + name + "\\b");
  for (const grammar::Token& t : k_.tokens)
    if (t.kind == TokenKind::Preprocessor && std::regex_search(t.text, word)) return true;
  return false;
}

// Whether the `+=` after the name at `t` is a statement of its own, the
// only assignment to the name, and runs once per thread (in no loop).
bool Analyser::advanced_once(std::size_t t) const {
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

// The call of a __device__ helper with a body whose argument is exactly
// the name at `t` (`f(a, p, n)`), passed as one of its pointer parameters.
std::optional<Analyser::HelperCall> Analyser::helper_call(std::size_t t) const { return helper_call(t, t); }

// The call of a __device__ helper whose whole argument is tokens first..last
// (`&p[i]` as well as `p`), at a pointer parameter of the helper.
std::optional<Analyser::HelperCall> Analyser::helper_call(std::size_t first, std::size_t last) const {
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
  const auto helper = find_helper(tok(callee).text, [&](const grammar::Function& f) {
    return f.params.size() == call.arguments.size() &&
           (f.params[call.parameter].pointer || f.params[call.parameter].texture_object());
  });
  if (!helper) return std::nullopt;
  call.helper = helper->function;
  call.file = helper->file;
  call.header = helper->header;
  return call;
}

// The helper's accesses through its parameter, its integer parameters
// standing for the call's arguments (their ranges at the call), joined
// to the buffer's own.
void Analyser::follow_into_helper(PointerUse& u, const HelperCall& call, std::size_t t, const Offsets& offsets) {
  const int line = tok(t).line;
  if (u.first_line == 0) u.first_line = line;
  const std::string where = "line " + std::to_string(line) + ": " + call.helper->name + "(..., " + u.name + ", ...)" +
                            (call.header.empty() ? "" : " (defined in " + call.header + ")");
  if (helper_depth_ >= 4) {
    if (u.refusal.empty()) u.refusal = where + ": helpers nest too deep";
    u.count.reset();
    u.read = u.written = true;
    return;
  }
  Analyser sub(*call.file, *call.helper, symbols_, true);
  sub.helper_depth_ = helper_depth_ + 1;
  const std::size_t at = element_of(t);
  const auto guards = at < elements_.size() ? guards_at(at) : std::map<std::string, Bound>{};
  for (std::size_t i = 0; i < call.helper->params.size(); ++i) {
    if (call.helper->params[i].pointer || call.helper->params[i].texture_object()) continue;
    std::string ignored;
    const auto e = parse(call.arguments[i].first, call.arguments[i].second);
    sub.arguments_[call.helper->params[i].name] = e ? eval(*e, guards, ignored) : std::nullopt;
    // A vector the helper never assigns to, given whole: the caller's sizes.
    const std::string& param = call.helper->params[i].name;
    const auto assigned = sub.assigned_count_.find(param);
    if (e && e->kind == ExprKind::Name && (assigned == sub.assigned_count_.end() || assigned->second == 0) &&
        !sub.components_assigned_.count(param)) {
      const std::string caller = vector_behind(e->text);
      if (const auto v = vectors_.find(caller); v != vectors_.end()) {
        sub.vectors_[caller] = v->second;
        sub.vector_arguments_[param] = caller;
      } else if (const auto r = real_vectors_.find(caller); r != real_vectors_.end()) {
        sub.real_vectors_[caller] = r->second;
        sub.vector_arguments_[param] = caller;
      }
    }
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
    need = need * SymbolicSize::constant(offsets.width) + *start->hi;
    evidence = where + ", '" + u.name + "' advanced by " + text + guards_text(guards) + "; in " +
               call.helper->name + ": " + inner.count_evidence;
  }
  add_need(u, need, evidence);
}

PointerUse Analyser::pointer_use(const std::string& name) {
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
void Analyser::scan(PointerUse& u, const std::string& name, const Offsets& offsets, std::size_t from) {
  for (std::size_t t = std::max(from, body_first_); t <= body_last_; ++t) {
    if (tok(t).kind != TokenKind::Identifier || tok(t).text != name) continue;
    const std::size_t p = prev(t), n = next(t);
    if (tok(p).is(".") || tok(p).is("->")) continue;
    // The alias's own declarator (`float* q = ...`), not a store `*q = v;`.
    if (!offsets.empty() && tok(p).is("*") && tok(n).is("=") && tok(prev(p)).kind == TokenKind::Identifier) continue;
    if (tok(n).is("[") && tok(next(n)).is("]")) continue;        // `extern __shared__ float s[];`
    if (t == declarator_) continue;                               // `__shared__ float s[256];`
    // tex1Dfetch<T>(name, i): a texture object's element i, of type T.
    if (const auto fetch = texture_fetch_type(p); fetch && tok(n).is(",")) {
      u.read = true;
      fetched_as(u, *fetch);
      const std::size_t close = matching(p);
      access(u, t, std::make_pair(next(n), prev(close)), offsets);
      continue;
    }
    if (passed_as_reference(u, t, p)) {
      t = next(t);
      continue;
    }
    // tex2D<T>(name, x, y), ...: a texture over a CUDA array, at coordinates.
    if (std::string type; tok(n).is(",")) {
      if (const unsigned dimensions = array_fetch_dimensions(p, type)) {
        u.read = true;
        fetched_as(u, type);
        array_fetch(u, t, p, dimensions);
        t = matching(p);
        continue;
      }
    }
    // `p += e;`, p's only assignment and in no loop: from there on p's
    // accesses are e further in (as through an alias `q = p + e`).
    if (offsets.empty() && tok(n).is("+=") && advanced_once(t)) {
      const std::size_t end = expression_end(next(n));
      scan(u, name, with_offset(Offsets{}, Span{next(n), end}), next(end));
      return;
    }
    // `float* q = (float*)(p + a) + b;`: q views the buffer as floats.
    if (const auto end = cast_alias(u, t, offsets)) {
      t = *end;
      continue;
    }
    // `float* q = p;` or `float* q = (p);` (NiftyReg's `float *ptr = (image);`):
    // q is p under another name, so q's accesses from there on are p's.
    const bool parenthesised = tok(p).is("(") && tok(n).is(")");
    const std::size_t assign = parenthesised ? prev(p) : p, end = parenthesised ? next(n) : n;
    if (declares_alias(assign) && tok(end).is(";")) {
      scan(u, tok(prev(assign)).text, offsets, next(end));
      t = end;
      continue;
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
      const std::size_t after = past_members(next(close));
      const bool member = after != next(close);
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
    // p->m: a member of the element p points at, as p[0].m (`latLong->lat`
    // through `LatLong* latLong = d_locations + i`). A member stored keeps
    // the element's others: inout.
    if (tok(n).is("->")) {
      const std::size_t after = past_members(next(next(n)));
      if (after <= body_last_ && (kAssignments.count(tok(after).text) || tok(after).is("++") || tok(after).is("--")))
        u.written = true;
      u.read = true;
      access(u, t, std::nullopt, offsets);
      continue;
    }
    // *p = v / *p
    if (tok(p).is("*") && (tok(prev(p)).kind == TokenKind::Punct && !tok(prev(p)).is(")") && !tok(prev(p)).is("]"))) {
      if (kAssignments.count(tok(n).text)) u.written = true;
      if (!tok(n).is("=")) u.read = true;
      access(u, t, std::nullopt, offsets, tok(n).is("="));
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

// The token after the member accesses and indices that start at `t`
// (`.x`, `->lat`, `[2]`, chained); `t` itself where none does.
std::size_t Analyser::past_members(std::size_t t) const {
  while (t <= body_last_ && (tok(t).is(".") || tok(t).is("->") || tok(t).is("[")))
    t = tok(t).is("[") ? next(matching(t)) : next(next(t));
  return t;
}

// `assign` is the `=` of a pointer declaration, `T* q = ...`: q is an alias.
bool Analyser::declares_alias(std::size_t assign) const {
  return tok(assign).is("=") && tok(prev(assign)).kind == TokenKind::Identifier && tok(prev(prev(assign))).is("*") &&
         k_.elements[elements_[std::min(element_of(assign), elements_.size() - 1)]].kind == ElementKind::Declaration;
}

// A use of the buffer at token `t` gi does not follow: no count, and since
// it may read or write there, inout; the first such use's reason is kept.
void Analyser::not_followed(PointerUse& u, std::size_t t, const std::string& why) const {
  if (u.first_line == 0) u.first_line = tok(t).line;
  if (u.refusal.empty()) u.refusal = "line " + std::to_string(tok(t).line) + ": " + why;
  u.count.reset();
  u.read = u.written = true;
}

}  // namespace gi::analysis::detail

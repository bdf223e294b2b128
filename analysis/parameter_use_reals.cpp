// The Analyser's real values (analysis/parameter_use_analyser.hpp): a float
// loaded from memory bounds an index once guards bound it and a conversion
// makes it whole, as a histogram bins a grey value:
//   if (v >= 0.0f && v < 256.0f) atomicAdd(&hist[(int)v >> 2], 1u);
// or once a clamp does (`fminf(fmaxf(v, 0.0f), 255.0f)`). A real range keeps
// whole-number ends: lo <= v, and v <= hi, or v < hi where the guard says so
// (`strict`), since `(int)v` is then at most hi - 1. Only + - *, division by
// a size, min and max keep a value real; anything else on a real value (a
// shift, a linear form) is refused, so a float is never taken for the whole
// number it would round to.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "analysis/expression.hpp"
#include "analysis/parameter_use_analyser.hpp"
#include "grammar/type_aliases.hpp"

namespace gi::analysis::detail {
namespace {

bool floating_type(const std::string& word) { return word == "float" || word == "double"; }

// A declaration's leading words that are no declarator: qualifiers and types.
bool declaration_word(const std::string& w) {
  static const std::set<std::string> words = {"const",  "static", "volatile", "register", "unsigned",
                                              "signed", "long",   "short",    "int",      "float",
                                              "double", "char",   "bool",     "constexpr", "__shared__"};
  return words.count(w) > 0;
}

// A whole number written as a float literal (`256.0f`, `0.f`, `1e3`): its value.
std::optional<long long> whole_float_literal(const std::string& text) {
  if (text.find_first_of(".eE") == std::string::npos || text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0)
    return std::nullopt;
  std::string digits = text;
  while (!digits.empty() && (digits.back() == 'f' || digits.back() == 'F' || digits.back() == 'l' ||
                             digits.back() == 'L'))
    digits.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size() || v != std::floor(v) || std::fabs(v) > 9.0e15) return std::nullopt;
    return static_cast<long long>(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A float literal strictly between 0 and 1 (`0.5f`, `.25`): its value.
std::optional<double> fraction_literal(const std::string& text) {
  if (text.find('.') == std::string::npos || text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0) return std::nullopt;
  std::string digits = text;
  while (!digits.empty() && (digits.back() == 'f' || digits.back() == 'F')) digits.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size() || !(v > 0.0 && v < 1.0)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

enum class Rounding { kNone, kDown, kTowardZero, kUp };

Rounding rounding(const std::string& f) {
  // NiftyReg's own Floor<int>(x) and Ceil<int>(x) (Maths.hpp) round as
  // floorf and ceilf do, to the type they are instantiated with.
  if (f.rfind("Floor<", 0) == 0) return Rounding::kDown;
  if (f.rfind("Ceil<", 0) == 0) return Rounding::kUp;
  if (f == "floorf" || f == "floor" || f == "__float2int_rd" || f == "__double2int_rd") return Rounding::kDown;
  if (f == "ceilf" || f == "ceil" || f == "__float2int_ru" || f == "__double2int_ru") return Rounding::kUp;
  if (f == "truncf" || f == "trunc" || f == "__float2int_rz" || f == "__float2uint_rz" || f == "__double2int_rz")
    return Rounding::kTowardZero;
  return Rounding::kNone;
}

bool is_integer_type(const std::string& type) {
  static const std::set<std::string> words = {"int",      "unsigned", "long",     "short",  "char",
                                              "signed",   "size_t",   "uint",     "ushort", "uchar",
                                              "int32_t",  "uint32_t", "int64_t",  "uint64_t"};
  if (type.find('*') != std::string::npos) return false;
  std::size_t at = 0;
  bool any = false;
  while (at < type.size()) {
    const std::size_t end = std::min(type.find(' ', at), type.size());
    const std::string w = type.substr(at, end - at);
    if (!w.empty() && w != "const" && w != "volatile") {
      if (!words.count(w)) return false;
      any = true;
    }
    at = end + 1;
  }
  return any;
}

// The values an 8- or 16-bit integer type holds (grammar::narrow_integer_type
// reads its spellings; char is signed, as on the GPU); nullopt for any other.
std::optional<std::pair<long long, long long>> narrow_range(const std::string& type) {
  const std::string narrow = grammar::narrow_integer_type(type);
  if (narrow == "uint8") return std::make_pair(0LL, 255LL);
  if (narrow == "int8") return std::make_pair(-128LL, 127LL);
  if (narrow == "uint16") return std::make_pair(0LL, 65535LL);
  if (narrow == "int16") return std::make_pair(-32768LL, 32767LL);
  return std::nullopt;
}

}  // namespace

// A float literal that is a whole number is that number, but real: `x /
// 2.0f` is no whole-number division.
std::optional<Range> real_literal(const std::string& text) {
  const auto v = whole_float_literal(text);
  if (!v) {
    // A fraction between 0 and 1 (`x + 0.5f`, a texel's centre) is within
    // 0 <= c < 1: whole-number ends are all a range has, and these hold it.
    if (const auto f = fraction_literal(text)) {
      Range r{SymbolicSize::constant(0), SymbolicSize::constant(1)};
      r.real = true;
      r.strict = true;
      return r;
    }
    return std::nullopt;
  }
  Range r{SymbolicSize::constant(*v), SymbolicSize::constant(*v)};
  r.real = true;
  return r;
}

// Parameters and locals declared float or double (not pointers): `const
// float r = in[i];`, `float a = 0.f, b;`. The declarators are the parser's
// (Element::declares); a name behind `*` or `&` is a pointer or reference.
void Analyser::collect_real_names() {
  for (const grammar::Param& p : f_.params)
    if (!p.pointer && floating_type(p.base_type)) reals_.insert(p.name);
  for (std::size_t e : elements_) {
    const grammar::Element& el = k_.elements[e];
    if (el.kind != ElementKind::Declaration) continue;
    std::size_t t = el.tokens.first;
    bool real = false;
    for (; t <= el.tokens.last && tok(t).kind == TokenKind::Identifier && declaration_word(tok(t).text); t = next(t))
      real = real || floating_type(tok(t).text);
    for (; real && t <= el.tokens.last; t = next(t))
      if (tok(t).kind == TokenKind::Identifier && !tok(prev(t)).is("*") && !tok(prev(t)).is("&") &&
          std::find(el.declares.begin(), el.declares.end(), tok(t).text) != el.declares.end())
        reals_.insert(tok(t).text);
  }
}

// Real parameters and __constant__s a spec gives a value (never a helper's:
// its caller's arguments are no sizes), that the body never assigns.
void Analyser::collect_real_sizes() {
  static const std::map<std::string, int> vector_sizes{{"float2", 2}, {"float3", 3}, {"float4", 4},
                                                       {"double2", 2}, {"double3", 3}, {"double4", 4}};
  const auto note = [&](const std::string& name, const std::string& type) {
    if (assigned_count_.count(name)) return;
    if (floating_type(type)) real_scalars_.insert(name);
    if (const auto v = vector_sizes.find(type); v != vector_sizes.end()) real_vectors_[name] = v->second;
  };
  if (helper_) return;
  for (const grammar::Param& p : f_.params)
    if (!p.pointer && !p.texture_object()) note(p.name, p.base_type);
  for (const auto& [name, c] : symbols_.constant_variables)
    if (!c.array) note(name, c.type);
}

// The divisor of `(float)x / spacing.x` where it is a real parameter, a
// component of one, or of a local that only copies one (`float3 s =
// c_Spacing;`): that size, exactly. gi cannot see from the kernel that it
// is positive; a spacing is, the small check keeps the user's value
// (ParameterUse::real_sizes) and the held-out workloads scale it as every
// size, to whole values of at least 1. A cell's index floor(x / s) stays
// below ceil_div(nx - 1, s) + 1 for any positive s, whole or not.
std::optional<Range> Analyser::real_divisor(const Expr& e, int depth) const {
  std::optional<std::string> size;
  if (e.kind == ExprKind::Name && real_scalars_.count(e.text)) size = e.text;
  if (!size) size = component_size(e, real_vectors_);
  if (!size) {
    // A component of a vector local built from them (`const float2 s = {
    // c_Spacing.x, c_Spacing.y };`): that component's.
    const auto c = component_definition(e);
    return c && depth < 4 ? real_divisor(*c, depth + 1) : std::nullopt;
  }
  Range r = exact(SymbolicSize::name(*size));
  r.real = true;
  return r;
}

// A real local's or parameter's range: the caller's argument for a helper's
// parameter; else the guards on it (`v >= 0.0f && v < 256.0f`: 0 <= v < 256)
// for the ends they give, its one definition for the others.
std::optional<Range> Analyser::real_name(const std::string& name, const std::map<std::string, Bound>& guards,
                                         std::string& why) const {
  const auto g = guards.find(name);
  const auto low = guards.find(kLowerBound + name);
  std::optional<Range> own;
  if (const auto a = arguments_.find(name); a != arguments_.end()) {
    own = a->second;
  } else if (assigned_once_.count(name) && !loop_counters_.count(name)) {
    std::string inner;
    if (const auto d = definition(name)) own = eval(*d, without(without(guards, name), kLowerBound + name), inner);
  }
  if (own && !own->real) own->real = true;
  Range r;
  r.real = true;
  if (low != guards.end()) {
    // `v > a` leaves v above a, never at a + 1 as a whole number would be.
    r.lo = low->second.written(true);
  } else if (own) {
    r.lo = own->lo;
  } else {
    if (why.empty()) why = "'" + name + "' is a real value, and neither a guard nor its definition bounds it below";
    return std::nullopt;
  }
  if (g != guards.end()) {
    // `v < L` gives v < L; `v <= L` (limit L + 1) gives v <= L.
    r.strict = !g->second.inclusive;
    r.hi = g->second.written(false);
  } else if (own && own->hi) {
    r.hi = own->hi;
    r.strict = own->strict;
  } else {
    if (why.empty()) why = "'" + name + "' is a real value, and neither a guard nor its definition bounds it above";
    return std::nullopt;
  }
  return r;
}

// a OP b where either is real; a whole-number range is a real one that
// reaches its upper end. nullopt, with `why`, for what gi does not bound.
std::optional<Range> Analyser::real_arithmetic(const std::string& op, const Range& a, const Range& b,
                                               std::string& why) {
  const SymbolicSize one = SymbolicSize::constant(1);
  Range r;
  r.real = true;
  if (op == "+") {
    r.lo = a.lo + b.lo;
    if (a.hi && b.hi) r.hi = *a.hi + *b.hi;
    r.strict = a.strict || b.strict;
    return r;
  }
  if (op == "-" && b.hi) {
    r.lo = a.lo - *b.hi;
    if (a.hi) r.hi = *a.hi - b.lo;
    r.strict = a.strict;
    return r;
  }
  const bool non_negative = a.lo.non_negative_for_sizes() && b.lo.non_negative_for_sizes();
  if (op == "*" && non_negative) {
    r.lo = a.lo * b.lo;
    if (a.hi && b.hi) {
      r.hi = *a.hi * *b.hi;
      // a < A and 0 <= b <= B: a * b < A * B only where B >= 1.
      r.strict = (a.strict && (*b.hi - one).non_negative_for_sizes()) ||
                 (b.strict && (*a.hi - one).non_negative_for_sizes());
    }
    return r;
  }
  const bool b_exact = b.hi && *b.hi == b.lo && !b.strict;
  const SymbolicSize& d = b.lo;
  if (op == "/" && b_exact && a.lo.non_negative_for_sizes() && d.is_monomial() && d.non_negative()) {
    // 0 <= a / d, and a / d <= (or <) hi / d, which rounds up to a whole number.
    if (!a.hi) return r;
    if (const auto q = a.hi->divided_by(d)) {
      r.hi = *q;
      r.strict = a.strict;
    } else if (a.hi->is_constant() && d.is_constant()) {
      const long long n = a.hi->constant_part(), m = d.constant_part();
      r.hi = SymbolicSize::constant(n / m + (n % m != 0 ? 1 : 0));
      r.strict = a.strict || n % m != 0;
    } else {
      r.hi = SymbolicSize::ceil_div(*a.hi, d);
    }
    return r;
  }
  why = "'" + op + "' on a real value is not arithmetic gi bounds";
  return std::nullopt;
}

// The whole number a real value converts to: rounded down (floorf,
// __float2int_rd), or toward zero (a cast to an integer type), which is
// the same but where the value is below zero, where it rounds up to 0.
std::optional<Range> Analyser::truncated(const Range& r, bool toward_zero, std::string& why) {
  if (!r.real) return r;
  if (!r.hi) {
    why = "the real value converted to a whole number has no upper end";
    return std::nullopt;
  }
  const SymbolicSize most = r.strict ? *r.hi - SymbolicSize::constant(1) : *r.hi;
  if (toward_zero && !most.non_negative_for_sizes() && !r.lo.non_negative_for_sizes()) {
    why = "the real value may lie between -1 and 0, which a cast rounds up to 0";
    return std::nullopt;
  }
  return Range{r.lo, most};
}

// An element of a pointer parameter of an 8- or 16-bit unsigned type
// (`img[i]`, img an `unsigned char*`): 0 up to the type's largest value,
// whatever the data; nullopt for any other load.
std::optional<Range> Analyser::narrow_load(const Expr& e) const {
  if (e.kind != ExprKind::Index || e.children.empty() || e.children[0].kind != ExprKind::Name) return std::nullopt;
  for (const grammar::Param& p : f_.params)
    if (p.pointer && p.name == e.children[0].text)
      if (const auto narrow = narrow_range(p.base_type); narrow && narrow->first == 0)
        return Range{SymbolicSize(), SymbolicSize::constant(narrow->second)};
  return std::nullopt;
}

bool Analyser::is_rounding(const Expr& e) {
  return e.kind == ExprKind::Call && e.children.size() == 2 && rounding(e.callee()) != Rounding::kNone;
}

// A conversion between whole and real: a cast (`(int)v`, `(float)i`,
// static_cast) or floorf / floor / truncf / ceilf and the __float2int_
// intrinsics (is_rounding).
std::optional<Range> Analyser::conversion(const Expr& e, const std::map<std::string, Bound>& guards,
                                          std::string& why, int depth) const {
  if (e.kind == ExprKind::Cast && !e.children.empty()) {
    const std::string type = e.text.rfind("const ", 0) == 0 ? e.text.substr(6) : e.text;
    if (const auto narrow = narrow_range(type)) {
      // An 8- or 16-bit type: the operand's range where it lies within the
      // type; else an unsigned type's whole range (the cast wraps an
      // integer, and saturates a float, into it), so `(unsigned char)x` is
      // 0..255 whatever x; a signed one may wrap below 0.
      std::string inner;
      auto r = eval(e.children[0], guards, inner, depth);
      if (r) r = truncated(*r, true, inner);
      const SymbolicSize least = SymbolicSize::constant(narrow->first), most = SymbolicSize::constant(narrow->second);
      if (r && r->hi && (r->lo - least).non_negative_for_sizes() && (most - *r->hi).non_negative_for_sizes()) return r;
      if (narrow->first == 0) return Range{least, most};
      why = "a cast to '" + e.text + "' may wrap " + (inner.empty() ? "its operand" : "(" + inner + ")") + " below 0";
      return std::nullopt;
    }
    auto r = eval(e.children[0], guards, why, depth);
    if (!r) return std::nullopt;
    if (is_integer_type(e.text)) return truncated(*r, true, why);
    if (floating_type(type)) r->real = true;
    return r;
  }
  if (!is_rounding(e)) return std::nullopt;
  const std::string f = e.callee();
  const Rounding how = rounding(f);
  // ceilf returns a float, __float2int_ru an int, Floor<T> a T.
  const bool returns_real = f.find('<') != std::string::npos ? floating_type(f.substr(f.find('<') + 1, f.size() - f.find('<') - 2))
                                                             : f.find("2") == std::string::npos;
  if (how == Rounding::kUp)
    if (const auto q = exact_quotient(e.children[1], guards, depth)) {
      Range r = exact(*q);
      r.real = returns_real;
      return r;
    }
  const auto r = eval(e.children[1], guards, why, depth);
  if (!r) return std::nullopt;
  std::optional<Range> whole;
  if (how == Rounding::kUp) {
    // lo <= v <= hi (or < hi) with whole ends: lo <= ceil(v) <= hi.
    if (!r->hi) {
      why = "the real value rounded up has no upper end";
      return std::nullopt;
    }
    whole = Range{r->lo, *r->hi};
  } else {
    whole = truncated(*r, how == Rounding::kTowardZero, why);
  }
  // floorf returns a float that holds a whole number: real, reaching its ends.
  if (whole && returns_real) whole->real = true;
  return whole;
}

// ceil(a / d) for whole numbers a and d, known exactly (`ceil((double) n /
// (double) threads_per_block)`, a count of blocks): ceil_div(a, d), exactly.
std::optional<SymbolicSize> Analyser::exact_quotient(const Expr& e, const std::map<std::string, Bound>& guards,
                                                     int depth) const {
  const Expr* q = &e;
  while (q->kind == ExprKind::Cast && !q->children.empty()) q = &q->children[0];
  if (q->kind != ExprKind::Binary || q->text != "/" || q->children.size() != 2) return std::nullopt;
  std::string ignored;
  const auto a = eval(q->children[0], guards, ignored, depth + 1), d = eval(q->children[1], guards, ignored, depth + 1);
  const auto known = [](const std::optional<Range>& r) { return r && r->hi && *r->hi == r->lo && !r->strict; };
  if (!known(a) || !known(d) || !a->lo.non_negative() || !d->lo.is_monomial() || !d->lo.non_negative())
    return std::nullopt;
  if (const auto exact_q = a->lo.divided_by(d->lo)) return exact_q;
  return SymbolicSize::ceil_div(a->lo, d->lo);
}

// min or max (fminf, fmaxf, or min and max of floats) where an operand is
// real: min(a, b) is at most either's upper end and at least the smaller
// lower end; max(a, b) at least either's lower end and at most the larger
// upper end. A clamp of a value gi cannot bound, `fminf(fmaxf(v, 0.0f),
// 255.0f)`, is between 0 and 255 (and so is a NaN v: fmaxf returns 0).
// nullopt where the ends needed cannot be ordered.
std::optional<Range> Analyser::real_extremum(bool is_min, const std::optional<Range>& a,
                                             const std::optional<Range>& b) {
  const auto at_most = [](const SymbolicSize& x, const SymbolicSize& y) { return (y - x).non_negative_for_sizes(); };
  Range r;
  r.real = true;
  if (is_min) {
    if (!a || !b) return std::nullopt;
    if (at_most(a->lo, b->lo)) r.lo = a->lo;
    else if (at_most(b->lo, a->lo)) r.lo = b->lo;
    else return std::nullopt;
    // Either upper end bounds it; the smaller where gi can tell.
    const std::optional<Range>& top = !b->hi ? a : !a->hi ? b : at_most(*a->hi, *b->hi) ? a : b;
    r.hi = top->hi;
    r.strict = top->strict;
    return r;
  }
  if (!a && !b) return std::nullopt;
  // Either lower end bounds it; the larger where gi can tell.
  const std::optional<Range>& bottom = !a ? b : !b ? a : at_most(a->lo, b->lo) ? b : a;
  r.lo = bottom->lo;
  if (a && b && a->hi && b->hi) {
    if (at_most(*a->hi, *b->hi)) r.hi = b->hi;
    else if (at_most(*b->hi, *a->hi)) r.hi = a->hi;
  }
  return r;
}

// a >> c, a << c (c a whole number), a & b: whole numbers that are never
// negative. nullopt for anything else.
std::optional<Range> Analyser::shifted_or_masked(const std::string& op, const Range& a, const Range& b) {
  if (a.real || b.real || !a.lo.non_negative_for_sizes() || !b.lo.non_negative_for_sizes()) return std::nullopt;
  const bool b_constant = b.hi && *b.hi == b.lo && b.lo.is_constant();
  if (op == "&") {
    // a & b is at most either operand: a's end where it is provably the
    // smaller, else b's (the mask, `i & 7`).
    Range r{SymbolicSize(), std::nullopt};
    if (a.hi && b.hi) r.hi = (*b.hi - *a.hi).non_negative_for_sizes() ? *a.hi : *b.hi;
    else r.hi = a.hi ? a.hi : b.hi;
    return r;
  }
  if (!b_constant || b.lo.constant_part() < 0 || b.lo.constant_part() > 40) return std::nullopt;
  const Range power = exact(SymbolicSize::constant(1LL << b.lo.constant_part()));
  std::string why;
  bool known = true;
  return arithmetic(op == "<<" ? "*" : "/", a, power, why, known);
}

// For each if (and the failing of each, before an early return): a local
// that is an element of a pointer parameter (`const float r = reference[i];`)
// and that the condition bounds on both sides by numbers gives that buffer's
// tested values (PointerUse::tested_values). Several tests widen them.
void Analyser::note_tested_values(std::vector<PointerUse>& pointers) const {
  for (std::size_t e : elements_) {
    const grammar::Element& el = k_.elements[e];
    if (el.kind != ElementKind::IfHeader) continue;
    const auto c = condition_of(el);
    if (!c) continue;
    const int line = tok(el.tokens.first).line;
    for (const bool negated : {false, true}) {
      std::map<std::string, Bound> bounds;
      bounds_from(*c, negated, line, bounds, kNoSite);
      for (const auto& [name, upper] : bounds) {
        const auto lower = bounds.find(kLowerBound + name);
        if (name.rfind('#', 0) == 0 || lower == bounds.end() || !upper.limit.is_constant() ||
            !lower->second.limit.is_constant() || !assigned_once_.count(name))
          continue;
        const auto d = definition(name);
        if (!d || d->kind != ExprKind::Index || d->children.empty() || d->children[0].kind != ExprKind::Name) continue;
        const std::string& buffer = d->children[0].text;
        const double hi = static_cast<double>(upper.written(false).constant_part());
        const double lo = static_cast<double>(lower->second.written(true).constant_part());
        if (!(lo < hi)) continue;
        for (PointerUse& u : pointers) {
          if (u.name != buffer) continue;
          if (u.tested_values) {
            u.tested_values->first = std::min(u.tested_values->first, lo);
            u.tested_values->second = std::max(u.tested_values->second, hi);
          } else {
            u.tested_values = std::make_pair(lo, hi);
            u.tested_values_evidence = "line " + std::to_string(line) + ": " + name + " = " +
                                       expression_text(k_.tokens, *d) + ", tested against " +
                                       std::to_string(static_cast<long long>(lo)) + " and " +
                                       std::to_string(static_cast<long long>(hi));
          }
        }
      }
    }
  }
}

}  // namespace gi::analysis::detail

// The Analyser's views of a buffer (analysis/parameter_use_analyser.hpp):
// a pointer cast that declares an alias, `(float*)(bytes + y * pitch) + x`,
// read in the buffer's own elements, and what rows a store reaches ask of
// the sizes (a pitch aligned for the view, rows that do not overlap).
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/parameter_use_analyser.hpp"
#include "grammar/type_aliases.hpp"

namespace gi::analysis::detail {

// Where `t` (the buffer's name) is the operand of a pointer cast that
// declares an alias: `U* q = (U*)p;`, `(U*)(p + a) + b` or
// `reinterpret_cast<U*>(p + a) + b`. q's accesses are then the buffer's,
// a (in p's units) and b (in U's) further in, each covering U's bytes: a
// pitched row of a byte buffer read as floats (CubicInterpolation's
// `(float*)(destination + y * pitch) + x`). Returns the declaration's last
// token, having scanned q; nullopt where `t` is no such operand.
std::optional<std::size_t> Analyser::cast_alias(PointerUse& u, std::size_t t, const Offsets& offsets) {
  std::size_t first = t, last = t;
  std::optional<Span> in_units_of_p;
  if (tok(prev(t)).is("(")) {  // (U*)(p + a)
    first = prev(t);
    last = matching(first);
    if (tok(next(t)).is("+")) {
      if (expression_end(next(next(t))) != prev(last)) return std::nullopt;
      in_units_of_p = Span{next(next(t)), prev(last)};
    } else if (next(t) != last) {
      return std::nullopt;
    }
  }
  // The cast before the operand: `( U * )` or `reinterpret_cast < U * >`.
  std::size_t type_end = prev(first), assign = 0;
  const bool named_cast = tok(type_end).is(">") && first != t;
  if (!named_cast && !tok(type_end).is(")")) return std::nullopt;
  if (!tok(prev(type_end)).is("*")) return std::nullopt;
  std::string type;
  std::size_t w = prev(prev(type_end));
  for (; w > body_first_ && tok(w).kind == TokenKind::Identifier; w = prev(w))
    type = tok(w).text + (type.empty() ? "" : " " + type);
  if (type.empty()) return std::nullopt;
  if (named_cast) {
    if (!tok(w).is("<") || (!tok(prev(w)).is("reinterpret_cast") && !tok(prev(w)).is("static_cast"))) return std::nullopt;
    assign = prev(prev(w));
  } else {
    if (!tok(w).is("(")) return std::nullopt;
    assign = prev(w);
  }
  if (!declares_alias(assign)) return std::nullopt;
  // `+ b` after the cast, in U's units, up to the declaration's end.
  std::optional<Span> in_units_of_view;
  std::size_t end = last;
  if (tok(next(last)).is("+")) {
    end = expression_end(next(next(last)));
    in_units_of_view = Span{next(next(last)), end};
  }
  if (!tok(next(end)).is(";") && !tok(next(end)).is(",")) return std::nullopt;
  const unsigned view = grammar::builtin_type_bytes(type), element = element_bytes_of(u.name);
  if (view == 0 || element == 0 || view % element != 0) {
    not_followed(u, t, "it is viewed as '" + type + "*' (line " + std::to_string(tok(t).line) +
                           "), whose elements gi cannot count in the buffer's own");
    return end;
  }
  u.viewed_as = type;
  Offsets alias = offsets;
  if (in_units_of_p) alias.starts.emplace_back(*in_units_of_p, offsets.width);
  alias.width = view / element;
  alias.align = std::max(1u, static_cast<unsigned>(grammar::builtin_type_alignment(type)) / element);
  if (in_units_of_view) alias.starts.emplace_back(*in_units_of_view, alias.width);
  scan(u, tok(prev(assign)).text, alias, next(end));
  return end;
}

// A row's extent as a pitch may be tied to it (`4 * threads_x`); "" where
// it is no plain polynomial of sizes (a ceil_div: the user ties the launch
// to the sizes instead, threads_x=img_m*img_n).
static std::string tie_text(const SymbolicSize& row) {
  const std::string text = row.text();
  return text.find('(') == std::string::npos ? text : "";
}

// A start of a view that is a row: `y * pitch`, pitch a scalar parameter
// of the kernel. Its elements must start aligned, so pitch (times the
// start's scale) is a multiple of the view's alignment; and a store's rows
// must not overlap, so pitch covers the rest of the row: the other starts'
// and the view's own index, at their largest, plus one element (`pitch -
// 4 * threads_x >= 0` for `(float*)(bytes + y * pitch) + x`, x <
// threads_x). Where two starts are rows (a slice pitch and a row pitch),
// only alignment is asked.
void Analyser::view_size_needs(PointerUse& u, const Offsets& offsets, const SymbolicSize& index_hi, bool store,
                               int line) {
  std::vector<std::size_t> rows;
  std::vector<std::string> pitch_of(offsets.starts.size());
  std::vector<std::optional<Expr>> parsed;
  for (std::size_t i = 0; i < offsets.starts.size(); ++i) {
    const auto& [span, scale] = offsets.starts[i];
    parsed.push_back(parse(span.first, span.second));
    const auto& e = parsed.back();
    if (!e || e->kind != ExprKind::Binary || e->text != "*" || e->children.size() != 2) continue;
    for (const Expr& side : e->children)
      if (is_scalar_parameter(side.text) && side.kind == ExprKind::Name) pitch_of[i] = side.text;
    if (pitch_of[i].empty()) continue;
    rows.push_back(i);
    const long long multiple = offsets.align / std::gcd(offsets.align, scale);
    if (multiple > 1)
      u.size_needs.push_back({pitch_of[i], multiple, std::nullopt, "",
                              "line " + std::to_string(line) + ": '" + u.name + "' is read as a view whose elements " +
                                  "align to " + std::to_string(offsets.align) + " of its own, and its rows start " +
                                  pitch_of[i] + " apart"});
  }
  if (!store || rows.size() != 1) return;
  const std::size_t row = rows.front();
  SymbolicSize rest = index_hi * SymbolicSize::constant(offsets.width) + SymbolicSize::constant(offsets.width);
  std::string ignored;
  for (std::size_t i = 0; i < offsets.starts.size(); ++i) {
    if (i == row) continue;
    const auto r = parsed[i] ? eval(*parsed[i], guards_at(element_of(offsets.starts[i].first.first)), ignored)
                             : std::nullopt;
    if (!r || !r->hi) return;
    rest = rest + *r->hi * SymbolicSize::constant(offsets.starts[i].second);
  }
  const SymbolicSize pitch =
      SymbolicSize::name(pitch_of[row]) * SymbolicSize::constant(offsets.starts[row].second);
  // The row, where the pitch alone must reach it (a pitch in the view's own units has no tie).
  const std::string row_text = offsets.starts[row].second == 1 ? tie_text(rest) : "";
  u.size_needs.push_back({pitch_of[row], 0, pitch - rest, row_text,
                          "line " + std::to_string(line) + ": stores through a view of '" + u.name + "' whose rows " +
                              "start " + pitch.text() + " apart and reach " + rest.text() + " into each"});
}

// A plain store's index in rows, `y * width + x` with width a scalar
// parameter: two threads whose x reaches past width write one element
// (`x < threads_x` of an exact launch, threads_x > width), and where x
// stops short of width the elements between rows are never written. So
// width must cover the rest of the index, and where it may exceed it the
// buffer keeps what it held (PointerUse::size_needs, as for a view's
// rows). Nothing is asked where the rest reaches width exactly (`x <
// width`), as guarded kernels write it.
void Analyser::row_size_needs(PointerUse& u, const Expr& index, const std::map<std::string, Bound>& guards, int line) {
  const LinearForm form = linear_form(k_.tokens, index);
  std::string pitch, row_key;
  for (const auto& [key, term] : form.terms) {
    const Expr& a = term.atom;
    if (term.coefficient != 1 || a.kind != ExprKind::Binary || a.text != "*" || a.children.size() != 2) continue;
    for (const Expr& side : a.children)
      if (side.kind == ExprKind::Name && is_scalar_parameter(side.text)) {
        if (!pitch.empty()) return;  // two rows (a slice and a row): not judged
        pitch = side.text;
        row_key = key;
      }
  }
  if (pitch.empty()) return;
  LinearForm rest = form;
  rest.terms.erase(row_key);
  std::string ignored;
  const auto r = eval_linear(rest, guards, ignored, 0);
  if (!r || !r->hi) return;
  const SymbolicSize row = *r->hi + SymbolicSize::constant(1);
  const SymbolicSize fact = SymbolicSize::name(pitch) - row;
  if (fact == SymbolicSize()) return;
  u.size_needs.push_back({pitch, 0, fact, tie_text(row),
                          "line " + std::to_string(line) + ": stores to '" + u.name + "' in rows " + pitch +
                              " apart that reach " + row.text() + " into each"});
}

// A scalar parameter of the kernel that no local shadows: a size a row may be.
bool Analyser::is_scalar_parameter(const std::string& name) const {
  if (definition(name)) return false;
  for (const grammar::Param& p : f_.params)
    if (p.name == name && !p.pointer) return true;
  return false;
}

// Bytes of one element of the buffer parameter `parameter` (0 where its
// type is no built-in one).
unsigned Analyser::element_bytes_of(const std::string& parameter) const {
  for (const grammar::Param& p : f_.params)
    if (p.name == parameter) return static_cast<unsigned>(grammar::builtin_type_bytes(p.base_type));
  return 0;
}

}  // namespace gi::analysis::detail

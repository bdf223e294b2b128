// The Analyser's structured bindings (analysis/parameter_use_analyser.hpp):
// NiftyReg 2 splits a voxel's flat index into its coordinates with
//   const auto [x, y, z] = IndexToDims<is3d>(index, dims);
// (its CudaCommon.hpp: a quotient and remainder by dims.x * dims.y, then
// by dims.x). gi reads the three names as what that helper computes, so a
// B-spline kernel's cell floor(y / spacing.y) is bounded by dims.y:
//   x = index % dims.x,
//   y = index / dims.x % dims.y (3-D; index / dims.x in 2-D),
//   z = index / (dims.x * dims.y) (3-D; 0 in 2-D).
// The overload without a template argument picks 3-D where dims.z > 1, which
// over index < dims.x * dims.y * dims.z gives the same values as the 3-D
// split, so it is read as that. Any other initialiser of a binding leaves
// its names without a definition, as before.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analysis/parameter_use_analyser.hpp"

namespace gi::analysis::detail {
namespace {

// The split a call of NiftyReg's IndexToDims makes: 3 for 3-D, 2 for 2-D,
// 0 for any other call.
int index_to_dims_axes(const Expr& call) {
  if (call.kind != ExprKind::Call || call.children.size() != 3) return 0;
  std::string f = call.callee();
  if (const std::size_t scope = f.rfind("::"); scope != std::string::npos) f = f.substr(scope + 2);
  if (f == "IndexToDims" || f == "IndexToDims<true>") return 3;
  if (f == "IndexToDims<false>") return 2;
  return 0;
}

Expr made(ExprKind kind, const std::string& text, std::vector<Expr> children, const Expr& at) {
  Expr e;
  e.kind = kind;
  e.text = text;
  e.children = std::move(children);
  e.first = at.first;
  e.last = at.last;
  return e;
}

Expr component(const Expr& vector, char field, const Expr& at) {
  Expr e = made(ExprKind::Member, ".", {vector}, at);
  e.field = std::string(1, field);
  return e;
}

}  // namespace

// `auto [a, b, c] = e;` (const, &, any names) in the body: each name's
// definition where e is a call gi reads (index_to_dims_axes) and the body
// never assigns the name again.
void Analyser::collect_bound_definitions() {
  for (std::size_t e : elements_) {
    const grammar::Element& el = k_.elements[e];
    // The parser takes a binding for a statement (its declarator is no name).
    if (el.kind != ElementKind::Declaration && el.kind != ElementKind::Statement) continue;
    std::size_t open = el.tokens.first;
    while (open < el.tokens.last && !tok(open).is("[") && !tok(open).is("=")) open = next(open);
    if (!tok(open).is("[") || !(tok(prev(open)).is("auto") || tok(prev(open)).is("&"))) continue;
    const std::size_t close = matching(open);
    if (!tok(next(close)).is("=")) continue;
    std::vector<std::string> names;
    for (std::size_t t = next(open); t < close; t = next(t))
      if (tok(t).kind == TokenKind::Identifier) names.push_back(tok(t).text);
    const std::size_t start = next(next(close));
    const std::size_t end = std::min(expression_end(start), el.tokens.last);
    const auto call = parse(start, end);
    const int axes = call ? index_to_dims_axes(*call) : 0;
    if (axes == 0 || names.size() != 3) continue;
    const Expr& index = call->children[1];
    const Expr& dims = call->children[2];
    const Expr& at = *call;
    const Expr dx = component(dims, 'x', at), dy = component(dims, 'y', at);
    const Expr rows = made(ExprKind::Binary, "/", {index, dx}, at);
    const Expr split[3] = {
        made(ExprKind::Binary, "%", {index, dx}, at),
        axes == 3 ? made(ExprKind::Binary, "%", {rows, dy}, at) : rows,
        axes == 3 ? made(ExprKind::Binary, "/", {index, made(ExprKind::Binary, "*", {dx, dy}, at)}, at)
                  : made(ExprKind::Literal, "0", {}, at)};
    for (int i = 0; i < 3; ++i) {
      if (assigned_count_.count(names[i])) continue;
      bound_definitions_[names[i]] = split[i];
      assigned_once_.insert(names[i]);
    }
  }
}

}  // namespace gi::analysis::detail

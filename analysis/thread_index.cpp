#include "analysis/thread_index.hpp"

namespace gi::analysis {
namespace {

// The two operands of `a OP b` in the order that `first` accepts the first
// one; false when it accepts neither.
template <class Pred>
bool operands(const Expr& e, const char* op, Pred first, const Expr*& a, const Expr*& b) {
  if (e.kind != ExprKind::Binary || e.text != op || e.children.size() != 2) return false;
  for (int side = 0; side < 2; ++side)
    if (first(e.children[side])) {
      a = &e.children[side];
      b = &e.children[1 - side];
      return true;
    }
  return false;
}

bool is_member(const Expr& e, const char* object, int axis) { return member_axis(e, object) == axis; }

// blockIdx.y * gridDim.x + blockIdx.x: the block's number in a 2-D grid read row by row.
bool is_flattened_block(const Expr& e) {
  const Expr *row = nullptr, *x = nullptr, *y = nullptr, *width = nullptr;
  if (!operands(e, "+", [](const Expr& c) { return c.kind == ExprKind::Binary; }, row, x)) return false;
  if (!is_member(*x, "blockIdx", 0)) return false;
  if (!operands(*row, "*", [](const Expr& c) { return is_member(c, "blockIdx", 1); }, y, width)) return false;
  return is_member(*width, "gridDim", 0);
}

// `e` with its casts dropped: `(size_t)blockIdx.x * blockDim.x + threadIdx.x`,
// as a kernel over more than 2^31 items widens its index, is the global index.
Expr without_casts(const Expr& e) {
  if (e.kind == ExprKind::Cast && !e.children.empty()) return without_casts(e.children[0]);
  Expr out = e;
  for (Expr& c : out.children) c = without_casts(c);
  return out;
}

}  // namespace

int member_axis(const Expr& m, const char* object) {
  if (m.kind != ExprKind::Member || m.children.empty() || !m.children[0].is_name(object)) return -1;
  return m.field == "x" ? 0 : m.field == "y" ? 1 : m.field == "z" ? 2 : -1;
}

GlobalIndexForm global_index_form(const Expr& written) {
  const Expr e = without_casts(written);
  if (const int axis = member_axis(e, "blockIdx"); axis > 0) return {axis, false, {}};
  const Expr *product = nullptr, *thread = nullptr;
  if (!operands(e, "+", [](const Expr& c) { return c.kind == ExprKind::Binary && c.text == "*"; }, product, thread))
    return {};
  const int axis = member_axis(*thread, "threadIdx");
  if (axis < 0) return {};
  const Expr *block = nullptr, *width = nullptr;
  if (!operands(*product, "*", [&](const Expr& c) { return is_member(c, "blockDim", axis); }, width, block)) {
    // A width written out (a macro, a number) instead of blockDim.
    if (!operands(*product, "*", [&](const Expr& c) { return is_member(c, "blockIdx", axis); }, block, width))
      return {};
    if (width->kind != ExprKind::Name && !whole_literal(*width)) return {};
    return {axis, false, *width};
  }
  if (is_member(*block, "blockIdx", axis)) return {axis, false, {}};
  if (axis == 0 && is_flattened_block(*block)) return {0, true, {}};
  return {};
}

bool is_grid_stride(const Expr& e) {
  const Expr *a = nullptr, *b = nullptr;
  return operands(e, "*", [](const Expr& c) { return is_member(c, "blockDim", 0); }, a, b) &&
         is_member(*b, "gridDim", 0);
}

}  // namespace gi::analysis

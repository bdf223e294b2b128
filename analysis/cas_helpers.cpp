#include "analysis/cas_helpers.hpp"

#include <set>

#include "analysis/expression.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::ParsedKernel;
using grammar::Token;
using grammar::TokenKind;

const Expr* find_call(const Expr& e, const std::string& callee) {
  if (e.kind == ExprKind::Call && e.callee() == callee) return &e;
  for (const Expr& c : e.children)
    if (const Expr* found = find_call(c, callee)) return found;
  return nullptr;
}

// Bit casts and casts around the value a CAS writes: __float_as_int(x) -> x.
const Expr& unwrapped(const Expr& e) {
  static const std::set<std::string> casts = {"__float_as_int", "__float_as_uint", "__double_as_longlong",
                                              "__int_as_float", "__uint_as_float", "__longlong_as_double"};
  if (e.kind == ExprKind::Cast) return unwrapped(e.children[0]);
  if (e.kind == ExprKind::Call && casts.count(e.callee()) && e.children.size() == 2) return unwrapped(e.children[1]);
  return e;
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  for (const std::string& n : names_in(e))
    if (names.count(n)) return true;
  return false;
}

// Whether `e` stores to memory: an assignment to a[i], *p or p->f.
bool stores(const Expr& e) {
  if (is_assignment(e)) {
    const Expr& target = e.children[0];
    if (target.kind == ExprKind::Index || (target.kind == ExprKind::Unary && target.text == "*") ||
        (target.kind == ExprKind::Member && target.text == "->"))
      return true;
  }
  for (const Expr& c : e.children)
    if (stores(c)) return true;
  return false;
}

std::optional<CasHelper> recognise(const ParsedKernel& k, int function) {
  const grammar::Function& f = k.functions[static_cast<std::size_t>(function)];
  if (f.is_kernel || f.params.size() != 2 || !f.params[0].pointer || f.params[1].pointer) return std::nullopt;
  const std::string type = f.params[0].base_type;
  if (type != "float" && type != "double") return std::nullopt;
  const std::string& pointer = f.params[0].name;
  const std::string& value = f.params[1].name;
  std::set<std::string> address = {pointer};  // the pointer and the locals made from it
  const Expr* cas = nullptr;
  std::optional<Expr> cas_statement;
  bool loop = false;
  for (const Element& e : k.elements) {
    if (e.function != function) continue;
    if (e.kind == ElementKind::LoopHeader) loop = true;
    if (e.kind == ElementKind::Declaration) {
      for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
        if (k.tokens[t].is(pointer))
          for (const std::string& name : e.declares) address.insert(name);
      continue;
    }
    if (e.kind != ElementKind::Statement) continue;
    std::size_t first = e.tokens.first, last = e.tokens.last;
    while (first < last && k.tokens[first].kind == TokenKind::Comment) ++first;
    while (last > first && (k.tokens[last].is(";") || k.tokens[last].kind == TokenKind::Comment)) --last;
    if (k.tokens[first].is("return")) ++first;
    if (first > last) continue;
    auto x = parse_expression(k.tokens, first, last);
    if (!x) return std::nullopt;  // what it cannot read, it cannot vouch for
    if (stores(*x)) return std::nullopt;
    for (std::size_t t = first; t <= last; ++t)
      if (k.tokens[t].kind == TokenKind::Identifier && k.tokens[t].text.rfind("atomic", 0) == 0 &&
          !k.tokens[t].is("atomicCAS"))
        return std::nullopt;
    if (find_call(*x, "atomicCAS")) {
      if (cas_statement) return std::nullopt;  // one CAS only
      cas_statement = std::move(*x);
      cas = find_call(*cas_statement, "atomicCAS");
    }
  }
  if (!cas || !loop || cas->children.size() != 4 || !mentions(cas->children[1], address)) return std::nullopt;
  const Expr& update = unwrapped(cas->children[3]);
  if (update.kind != ExprKind::Call || update.children.size() != 3) return std::nullopt;
  static const std::set<std::string> max_forms = {"fmaxf", "fmax", "max"}, min_forms = {"fminf", "fmin", "min"};
  const std::string callee = update.callee();
  const std::string kind = max_forms.count(callee) ? "max" : min_forms.count(callee) ? "min" : "";
  if (kind.empty()) return std::nullopt;
  const bool first_is_value = mentions(update.children[1], {value});
  const bool second_is_value = mentions(update.children[2], {value});
  if (first_is_value == second_is_value) return std::nullopt;  // one side the value, the other the word read
  return CasHelper{{f.name, kind}, type};
}

}  // namespace

std::map<std::string, CasHelper> find_cas_helpers(const ParsedKernel& k) {
  std::map<std::string, CasHelper> out;
  for (std::size_t f = 0; f < k.functions.size(); ++f)
    if (k.functions[f].header_element >= 0)
      if (auto h = recognise(k, static_cast<int>(f))) out[h->operation.function] = *h;
  return out;
}

}  // namespace gi::analysis

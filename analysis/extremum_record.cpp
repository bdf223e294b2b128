#include "analysis/extremum_record.hpp"

#include <algorithm>

#include "analysis/expression.hpp"

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

// `name` or `name.field`: a record slot; root empty otherwise.
RecordField slot(const Expr& e) {
  if (e.kind == ExprKind::Name) return {e.text, e.text, ""};
  if (e.kind == ExprKind::Member && e.text == "." && e.children[0].kind == ExprKind::Name)
    return {e.children[0].text, e.children[0].text + "." + e.field, e.field};
  return {};
}

bool mentions(const Expr& e, const std::vector<RecordField>& fields) {
  const auto names = names_in(e);
  return std::any_of(fields.begin(), fields.end(), [&](const RecordField& f) {
    return std::find(names.begin(), names.end(), f.root) != names.end();
  });
}

}  // namespace

RecordUpdate record_update(const grammar::ParsedKernel& k, std::size_t h) {
  RecordUpdate r;
  const auto& t = k.tokens;
  const grammar::Element& header = k.elements[h];
  if (header.kind != ElementKind::IfHeader || !header.condition) return r.why = "not an if", r;
  const auto condition = parse_expression(t, header.condition->first + 1, header.condition->last - 1, &r.why);
  if (!condition) return r;
  const std::string& op = condition->text;
  if (condition->kind != ExprKind::Binary || (op != ">" && op != ">=" && op != "<" && op != "<="))
    return r.why = "its condition is no comparison", r;
  r.op = op;
  r.compared = slot(condition->children[1]);
  if (r.compared.root.empty()) return r.why = "the right side of its comparison is no variable or member of one", r;
  const Expr& score = condition->children[0];
  // The body: braced, plain assignments only, no else.
  std::size_t open = h + 1;
  while (open < k.elements.size() && k.elements[open].kind == ElementKind::Comment) ++open;
  if (open >= k.elements.size() || k.elements[open].kind != ElementKind::BlockOpen)
    return r.why = "the comparison's body has no braces", r;
  std::size_t i = open + 1;
  const int block = k.elements[open].block_after;
  std::vector<Expr> values;
  for (; i < k.elements.size() && k.elements[i].kind != ElementKind::BlockClose; ++i) {
    const grammar::Element& e = k.elements[i];
    if (e.kind == ElementKind::Comment) continue;
    if (e.kind != ElementKind::Statement || e.block != block) return r.why = "the comparison's body holds more than assignments", r;
    std::size_t last = e.tokens.last;
    while (last > e.tokens.first && (t[last].is(";") || t[last].kind == TokenKind::Comment)) --last;
    const auto x = parse_expression(t, e.tokens.first, last, &r.why);
    if (!x) return r;
    if (x->kind != ExprKind::Binary || x->text != "=") return r.why = "the comparison's body holds more than assignments", r;
    const RecordField f = slot(x->children[0]);
    if (f.root.empty()) return r.why = "the comparison's body assigns something other than a variable or member", r;
    if (f.access == r.compared.access) {
      if (expression_text(t, x->children[1]) != expression_text(t, score))
        return r.why = r.compared.access + " is not given the score it was compared with", r;
      r.score_statement = i;
    }
    r.fields.push_back(f);
    r.statements.push_back(i);
    values.push_back(x->children[1]);
  }
  if (i >= k.elements.size()) return r.why = "the comparison's body has no end", r;
  r.body_close = i;
  if (k.elements[i].followed_by_continuation) return r.why = "the comparison has an else", r;
  if (r.score_statement == 0) return r.why = r.compared.access + ", compared with, is not assigned in the comparison's body", r;
  if (mentions(score, r.fields)) return r.why = "the score reads the record", r;
  for (const Expr& v : values)
    if (mentions(v, r.fields)) return r.why = "a value put in the record reads the record", r;
  return r;
}

}  // namespace gi::analysis

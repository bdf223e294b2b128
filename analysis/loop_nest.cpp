#include "analysis/loop_nest.hpp"

#include <algorithm>

#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::ElementKind;
using grammar::TokenKind;

std::size_t next_element(const grammar::ParsedKernel& k, std::size_t i) {
  ++i;
  while (i < k.elements.size() && k.elements[i].kind == ElementKind::Comment) ++i;
  return i;
}


}  // namespace

std::size_t body_close(const grammar::ParsedKernel& k, std::size_t h) {
  const std::size_t open = next_element(k, h);
  if (open >= k.elements.size() || k.elements[open].kind != ElementKind::BlockOpen) return 0;
  const std::size_t end = closing(k.tokens, k.elements[open].tokens.first);
  for (std::size_t c = open; c < k.elements.size(); ++c)
    if (k.elements[c].kind == ElementKind::BlockClose && k.elements[c].tokens.first == end) return c;
  return 0;
}

long long literal_value(const Expr& e, bool& ok) {
  const Expr* x = &e;
  const bool negative = e.kind == ExprKind::Unary && e.text == "-";
  if (negative) x = &e.children[0];
  ok = x->kind == ExprKind::Literal && !x->text.empty() && x->text.size() < 10 &&
       std::all_of(x->text.begin(), x->text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!ok) return 0;
  const long long v = std::stoll(x->text);
  return negative ? -v : v;
}

ForLoopForm for_loop_form(const grammar::ParsedKernel& k, std::size_t h) {
  const auto& t = k.tokens;
  ForLoopForm f;
  const grammar::Element& header = k.elements[h];
  std::size_t lp = next_code(t, header.tokens.first);
  while (lp <= header.tokens.last && !t[lp].is("(")) ++lp;
  if (lp > header.tokens.last) return f;
  const std::size_t rp = closing(t, lp);
  const auto parts = split(t, lp + 1, rp - 1, ";");
  if (parts.size() != 3 || parts[0].first > parts[0].second) return f;
  std::size_t eq = parts[0].first;
  while (eq <= parts[0].second && !t[eq].is("=")) ++eq;
  if (eq > parts[0].second || eq == parts[0].first) return f;
  std::size_t v = eq - 1;
  while (t[v].kind == TokenKind::Comment) --v;
  f.var = t[v].text;
  f.declared_int = v > parts[0].first && t[v - 1].is("int") && v - 1 == next_code(t, parts[0].first);
  const auto start = parse_expression(t, eq + 1, parts[0].second);
  const auto cond = parse_expression(t, parts[1].first, parts[1].second);
  const auto step = parse_expression(t, parts[2].first, parts[2].second);
  if (!start || !cond || !step || cond->kind != ExprKind::Binary || (cond->text != "<" && cond->text != "<=") ||
      !cond->children[0].is_name(f.var))
    return f;
  const bool unit = ((step->kind == ExprKind::Unary && (step->text == "++" || step->text == "post++")) &&
                     step->children[0].is_name(f.var)) ||
                    (step->kind == ExprKind::Binary && step->text == "+=" && step->children[0].is_name(f.var) &&
                     step->children[1].kind == ExprKind::Literal && step->children[1].text == "1");
  if (!unit) return f;
  f.ok = true;
  f.op = cond->text;
  f.start = expression_text(t, *start);
  f.bound = expression_text(t, cond->children[1]);
  f.start_names = names_in(*start);
  f.bound_names = names_in(cond->children[1]);
  bool a_ok = false, e_ok = false;
  const long long a = literal_value(*start, a_ok), e = literal_value(cond->children[1], e_ok);
  if (a_ok && e_ok) f.trips = std::max(0LL, e - a + (f.op == "<=" ? 1 : 0));
  f.start_first = next_code(t, eq + 1);
  f.start_last = parts[0].second;
  while (t[f.start_last].kind == TokenKind::Comment) --f.start_last;
  f.step_first = next_code(t, parts[2].first);
  f.step_last = parts[2].second;
  while (t[f.step_last].kind == TokenKind::Comment) --f.step_last;
  f.header_first = next_code(t, header.tokens.first);
  f.header_last = rp;
  return f;
}

std::vector<NestLevel> perfect_nest(const grammar::ParsedKernel& k, std::size_t h) {
  std::vector<NestLevel> levels;
  std::vector<std::string> counters;
  std::size_t at = h;
  std::size_t around = body_close(k, h);
  while (around != 0) {
    const ForLoopForm f = for_loop_form(k, at);
    if (!f.ok || !f.declared_int) break;
    const auto reads_counter = [&](const std::vector<std::string>& names) {
      return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
        return std::find(counters.begin(), counters.end(), n) != counters.end() || n == f.var;
      });
    };
    if (reads_counter(f.start_names) || reads_counter(f.bound_names)) break;
    NestLevel level{f.var, f.start, "(" + f.bound + ") - (" + f.start + ")" + (f.op == "<=" ? " + 1" : ""), at,
                    f.header_first, f.header_last, f.start_names, f.trips};
    level.names.insert(level.names.end(), f.bound_names.begin(), f.bound_names.end());
    levels.push_back(level);
    counters.push_back(f.var);
    // The next level: the only thing in this one's braces.
    const std::size_t inner = next_element(k, next_element(k, at));
    if (inner >= k.elements.size() || k.elements[inner].kind != ElementKind::LoopHeader || !k.elements[inner].is_for) break;
    const std::size_t close = body_close(k, inner);
    if (close == 0 || next_element(k, close) != around) break;
    at = inner;
    around = close;
  }
  if (levels.size() < 2) return {};
  return levels;
}

long long nest_trips(const std::vector<NestLevel>& nest) {
  long long trips = 1;
  for (const NestLevel& l : nest) {
    if (l.trips < 0) return -1;
    trips *= l.trips;
  }
  return trips;
}

}  // namespace gi::analysis

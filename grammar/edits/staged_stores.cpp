#include "grammar/edits/staged_stores.hpp"

#include <map>
#include <optional>
#include <set>
#include <variant>

#include "analysis/expression.hpp"
#include "analysis/linear_form.hpp"
#include "analysis/token_ranges.hpp"
#include "grammar/edits/atomic_site_edit.hpp"

namespace gi::grammar {
namespace {

using analysis::closing;
using analysis::next_code;

// The record's components a loop `for ([int] i = A; i < B; i++)` (or
// `i <= B`, `++i`, `i += 1`) walks, [A, B), with the counter's name; nothing
// for any other header.
struct CountedLoop {
  std::string counter;
  long long first = 0, end = 0;
};

std::optional<long long> literal_at(const std::vector<Token>& t, std::size_t first, std::size_t last) {
  const auto e = analysis::parse_expression(t, first, last);
  if (!e) return std::nullopt;
  return analysis::whole_literal(*e);
}

std::optional<CountedLoop> counted_loop(const ParsedKernel& k, const Element& header) {
  const auto& t = k.tokens;
  const std::size_t lp = next_code(t, header.tokens.first + 1);
  if (lp >= t.size() || !t[lp].is("(")) return std::nullopt;
  const std::size_t rp = closing(t, lp);
  const auto parts = analysis::split(t, lp + 1, rp - 1, ";");
  if (parts.size() != 3) return std::nullopt;
  // init: [int|unsigned] i = A
  std::size_t i = parts[0].first;
  while (i <= parts[0].second && (t[i].is("int") || t[i].is("unsigned") || t[i].kind == TokenKind::Comment)) ++i;
  if (i > parts[0].second || t[i].kind != TokenKind::Identifier) return std::nullopt;
  CountedLoop loop{t[i].text, 0, 0};
  const std::size_t eq = next_code(t, i + 1);
  if (eq > parts[0].second || !t[eq].is("=")) return std::nullopt;
  const auto first = literal_at(t, eq + 1, parts[0].second);
  // condition: i < B or i <= B
  const std::size_t name = next_code(t, parts[1].first), op = next_code(t, name + 1);
  if (!first || op > parts[1].second || !t[name].is(loop.counter) || !(t[op].is("<") || t[op].is("<="))) return std::nullopt;
  const auto bound = literal_at(t, op + 1, parts[1].second);
  if (!bound) return std::nullopt;
  // step: i++, ++i or i += 1
  const auto step = analysis::parse_expression(t, parts[2].first, parts[2].second);
  if (!step) return std::nullopt;
  const bool increment = (step->kind == analysis::ExprKind::Unary && (step->text == "post++" || step->text == "++") &&
                          step->children[0].is_name(loop.counter)) ||
                         (step->kind == analysis::ExprKind::Binary && step->text == "+=" && step->children[0].is_name(loop.counter) &&
                          analysis::whole_literal(step->children[1]) == 1);
  if (!increment) return std::nullopt;
  loop.first = *first;
  loop.end = t[op].is("<=") ? *bound + 1 : *bound;
  return loop;
}

// Whether a token in [first, last] assigns `name` (=, op=, ++, --) or
// leaves the loop early (break, continue, goto, return).
std::optional<std::string> loop_body_problem(const ParsedKernel& k, std::size_t first, std::size_t last, const std::string& name) {
  const auto& t = k.tokens;
  for (std::size_t i = first; i <= last && i < t.size(); ++i) {
    for (const char* exit : {"break", "continue", "goto", "return"})
      if (t[i].is(exit)) return std::string("its loop holds a ") + exit + " (line " + std::to_string(t[i].line) + ")";
    if (!t[i].is(name)) continue;
    const std::size_t after = next_code(t, i + 1);
    const bool before = i > 0 && (t[i - 1].is("++") || t[i - 1].is("--"));
    if (before || (after < t.size() && t[after].kind == TokenKind::Punct && t[after].text.size() <= 3 &&
                   t[after].text.back() == '=' && !t[after].is("==") && !t[after].is("<=") && !t[after].is(">=") &&
                   !t[after].is("!=")) ||
        (after < t.size() && (t[after].is("++") || t[after].is("--"))))
      return "its loop assigns its counter '" + name + "' (line " + std::to_string(t[i].line) + ")";
  }
  return std::nullopt;
}

}  // namespace

unsigned staged_element_bytes(const std::string& type) {
  static const std::map<std::string, unsigned> bytes = {
      {"float", 4},  {"int", 4},   {"unsigned", 4},  {"unsigned int", 4}, {"double", 8},  {"float2", 8},
      {"int2", 8},   {"uint2", 8}, {"float3", 12},   {"int3", 12},        {"uint3", 12},  {"float4", 16},
      {"int4", 16},  {"uint4", 16}, {"double2", 16}, {"long long", 8},    {"unsigned long long", 8}};
  const auto it = bytes.find(type);
  return it == bytes.end() ? 0 : it->second;
}

StagedStores find_staged_stores(const Grammar& g, const EditContext& context) {
  StagedStores out;
  const auto found = find_work_item_region(g, context);
  if (const auto* why = std::get_if<std::string>(&found)) {
    out.refusals.push_back("no work-item region: " + *why);
    return out;
  }
  out.region = std::get<WorkItemRegion>(found);
  const WorkItemRegion& region = out.region;
  if (region.bound.empty()) {
    out.refusals.push_back("the guard is not `if (" + region.tid + " < N)` with N unchanged inside: the copy-out would not know how many items the block has");
    return out;
  }
  const ParsedKernel& k = g.parsed();
  const auto& t = k.tokens;
  const auto live = edits::live_tokens(g, context);
  const int fn = g.context(region.first_rule).function;
  const Function& f = k.functions[static_cast<std::size_t>(fn)];
  // The region's elements: the index line, then the guard `if (tid < N)`.
  std::size_t index = k.elements.size(), guard = k.elements.size();
  for (std::size_t e = 0; e < k.elements.size(); ++e) {
    const Element& el = k.elements[e];
    if (el.function != fn || g.rule_of_element(e) < region.first_rule || g.rule_of_element(e) > region.last_rule) continue;
    if (index == k.elements.size()) index = e;
    else if (el.kind == ElementKind::IfHeader && el.block == k.elements[index].block) {
      guard = e;
      break;
    }
  }
  if (guard + 1 >= k.elements.size() || k.elements[guard + 1].kind != ElementKind::BlockOpen) {
    out.refusals.push_back("no braced guard after the index line");
    return out;
  }
  // Exactly `tid < N`: a thread below N that another condition turned away
  // would leave its record unwritten, and the copy-out would write it anyway.
  const auto condition = analysis::parse_expression(t, k.elements[guard].condition->first + 1, k.elements[guard].condition->last - 1);
  if (!condition || condition->kind != analysis::ExprKind::Binary || condition->text != "<") {
    out.refusals.push_back("the guard holds more than `" + region.tid + " < " + region.bound +
                           "`: a thread it turns away below that bound would leave its record unwritten");
    return out;
  }
  const int body = k.elements[guard + 1].block_after;
  if (k.elements[guard].block != f.block) {
    out.refusals.push_back("the guard stands inside another statement: not every thread would reach the barrier after it");
    return out;
  }
  std::size_t region_end = 0;
  for (std::size_t e = index; e < k.elements.size() && g.rule_of_element(e) <= region.last_rule; ++e)
    region_end = std::max(region_end, k.elements[e].tokens.last);
  const std::size_t head = k.elements[static_cast<std::size_t>(f.header_element)].tokens.first;
  for (std::size_t i = head; i <= region_end; ++i)
    if (live(i) && (t[i].is("return") || t[i].is("goto"))) {
      out.refusals.push_back("a " + t[i].text + " on line " + std::to_string(t[i].line) +
                             " would keep threads from the barrier after the guard");
      return out;
    }
  out.after_rule = region.last_rule + 1;
  if (out.after_rule >= g.rules().size() || g.context(out.after_rule).function != fn) {
    out.refusals.push_back("nothing follows the guard inside the kernel");
    return out;
  }
  const std::size_t body_end = closing(t, k.elements[static_cast<std::size_t>(f.header_element)].tokens.last);

  for (const Param& p : f.params) {
    if (!p.pointer) continue;
    StagedStore site{p.name, p.base_type, 0, staged_element_bytes(p.base_type), {}};
    std::optional<std::string> why;
    std::set<long long> written;
    bool any = false, coalesced = false;
    for (std::size_t e = index; e < k.elements.size() && !why && !coalesced; ++e) {
      const Element& el = k.elements[e];
      if (el.function != fn) continue;
      if (el.tokens.first > body_end) break;
      for (std::size_t i = el.tokens.first; i <= el.tokens.last && !why && !coalesced; ++i) {
        if (!t[i].is(p.name) || !live(i) || (i > 0 && (t[i - 1].is(".") || t[i - 1].is("->")))) continue;
        any = true;
        const std::string where = " (line " + std::to_string(t[i].line) + ")";
        // `p[INDEX] = VALUE;` as a whole statement.
        const std::size_t open = next_code(t, i + 1);
        if (el.kind != ElementKind::Statement || i != el.tokens.first || open >= t.size() || !t[open].is("[")) {
          why = "'" + p.name + "' is used other than as `" + p.name + "[...] = ...;`" + where;
          break;
        }
        const std::size_t close = closing(t, open), assign = next_code(t, close + 1);
        if (assign >= t.size() || !t[assign].is("=")) {
          why = "'" + p.name + "' is read or updated, not only stored" + where;
          break;
        }
        // Straight in the guard's body, or straight in a counted loop's body there.
        std::optional<CountedLoop> loop;
        if (el.block != body) {
          std::size_t h = e;
          while (h > guard && k.elements[h].kind != ElementKind::LoopHeader) --h;
          const Element& header = k.elements[h];
          const bool braced = h + 1 < k.elements.size() && k.elements[h + 1].kind == ElementKind::BlockOpen &&
                              k.elements[h + 1].block_after == el.block;
          const bool braceless = h + 1 == e && el.braceless_body;
          if (header.kind == ElementKind::LoopHeader && header.is_for && header.block == body && (braced || braceless))
            loop = counted_loop(k, header);
          if (!loop) {
            why = "a store to '" + p.name + "' is under a condition or in a loop other than `for (int i = A; i < B; i++)` with literal bounds" + where;
            break;
          }
          const std::size_t from = braced ? k.elements[h + 1].tokens.last + 1 : el.tokens.first;
          const std::size_t to = braced ? closing(t, k.elements[h + 1].tokens.last) : el.tokens.last;
          if (auto problem = loop_body_problem(k, from, to, loop->counter)) {
            why = "a store to '" + p.name + "': " + *problem;
            break;
          }
        }
        // INDEX = K * tid + c, c a literal or the loop's counter plus one.
        std::string parse_error;
        const auto index_expr = analysis::parse_expression(t, open + 1, close - 1, &parse_error);
        if (!index_expr) {
          why = "the index of a store to '" + p.name + "' cannot be read: " + parse_error + where;
          break;
        }
        const analysis::LinearForm form = analysis::linear_form(t, *index_expr);
        long long stride = 0;
        bool counter = false, other = false;
        for (const auto& [text, term] : form.terms) {
          if (text == region.tid) stride = term.coefficient;
          else if (loop && text == loop->counter && term.coefficient == 1) counter = true;
          else other = true;
        }
        const std::string index_text = analysis::expression_text(t, *index_expr);
        if (stride == 1 && !other && !counter && form.constant == 0) {
          coalesced = true;  // `p[tid] = v`: a warp's stores are consecutive already
          break;
        }
        if (stride < 2 || other) {
          why = "the index '" + index_text + "' of a store to '" + p.name + "' is not K * " + region.tid +
                " + c (K >= 2 a literal, c a literal or a counted loop's counter)" + where;
          break;
        }
        if (site.components != 0 && site.components != stride) {
          why = "stores to '" + p.name + "' use records of " + std::to_string(site.components) + " and of " +
                std::to_string(stride) + " elements" + where;
          break;
        }
        site.components = static_cast<int>(stride);
        const long long from = form.constant + (counter ? loop->first : 0);
        const long long to = form.constant + (counter ? loop->end - 1 : 0);
        if (from < 0 || to >= stride || from > to) {
          why = "the store '" + p.name + "[" + index_text + "]' reaches outside the thread's record of " +
                std::to_string(stride) + " elements" + where;
          break;
        }
        for (long long c = from; c <= to; ++c) written.insert(c);
        const std::size_t rule = g.rule_of_element(e);
        if (site.rules.empty() || site.rules.back() != rule) site.rules.push_back(rule);
        i = close;
      }
    }
    if (!any || !p.written || coalesced) continue;  // only read, or stored one element a thread: nothing to stage
    if (!why && site.element_bytes == 0) why = "'" + p.name + "' has elements of type '" + p.base_type + "', whose size gi does not know";
    if (!why && static_cast<unsigned>(site.components) * site.element_bytes > 224)
      why = "'" + p.name + "' has records of " + std::to_string(site.components * site.element_bytes) +
            " bytes: a block of 1024 threads would not fit in shared memory";
    if (!why && written.size() != static_cast<std::size_t>(site.components))
      why = "the stores to '" + p.name + "' write " + std::to_string(written.size()) + " of each record's " +
            std::to_string(site.components) + " elements: the copy-out would write the others";
    if (why) out.refusals.push_back(*why);
    else out.sites.push_back(site);
  }
  if (out.sites.empty() && out.refusals.empty()) out.refusals.push_back("no buffer is written as `p[K * " + region.tid + " + c] = ...;`");
  return out;
}

}  // namespace gi::grammar

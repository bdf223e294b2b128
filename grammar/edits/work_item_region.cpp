#include "grammar/edits/work_item_region.hpp"

#include <functional>
#include <optional>

#include "analysis/expression.hpp"
#include "analysis/global_index.hpp"
#include "grammar/edits/atomic_site_edit.hpp"

namespace gi::grammar {
namespace {


std::size_t next_code(const ParsedKernel& k, std::size_t t) {
  while (t < k.tokens.size() && k.tokens[t].kind == TokenKind::Comment) ++t;
  return t;
}

// The token closing the bracket at `open`.
std::size_t closing(const ParsedKernel& k, std::size_t open) { return closing_bracket(k.tokens, open); }

// The `;` ending a braceless body of one plain statement (`if (i < n)
// y[i] = x[i];`, the commonest guard of all); npos where the body is a
// statement with a body of its own (if, for, while, do, switch), whose end
// this does not follow, or is followed by an `else`.
std::size_t plain_statement_end(const ParsedKernel& k, std::size_t first) {
  for (const char* compound : {"if", "for", "while", "do", "switch", "else", "{"})
    if (k.tokens[first].is(compound)) return std::string::npos;
  int depth = 0;
  for (std::size_t t = first; t < k.tokens.size(); t = next_code(k, t + 1)) {
    const std::string& x = k.tokens[t].text;
    if (x == "(" || x == "[" || x == "{") ++depth;
    if (x == ")" || x == "]" || x == "}") --depth;
    if (depth < 0) return std::string::npos;
    if (depth == 0 && x == ";") {
      const std::size_t after = next_code(k, t + 1);
      return after < k.tokens.size() && k.tokens[after].is("else") ? std::string::npos : t;
    }
  }
  return std::string::npos;
}

// The last token of the if statement whose condition ends at `rp`, else
// branches included; npos when a body is a braceless compound statement.
std::size_t if_statement_end(const ParsedKernel& k, std::size_t rp) {
  std::size_t body = next_code(k, rp + 1);
  if (body >= k.tokens.size()) return std::string::npos;
  if (!k.tokens[body].is("{")) return plain_statement_end(k, body);
  std::size_t end = closing(k, body);
  const std::size_t e = next_code(k, end + 1);
  if (e < k.tokens.size() && k.tokens[e].is("else")) {
    const std::size_t next = next_code(k, e + 1);
    if (next < k.tokens.size() && k.tokens[next].is("if")) {
      const std::size_t lp = next_code(k, next + 1);
      return if_statement_end(k, closing(k, lp));
    }
    if (next >= k.tokens.size() || !k.tokens[next].is("{")) return std::string::npos;
    end = closing(k, next);
  }
  return end;
}

// `NAME = <global index>;` or the declaration `[const] int NAME = <global
// index>;` (analysis/global_index.hpp): the position of NAME and of '=', or nothing.
std::optional<std::pair<std::size_t, std::size_t>> index_line(const ParsedKernel& k, const Element& e) {
  const auto line = analysis::global_index_line(k, e, true);
  if (!line) return std::nullopt;
  return std::make_pair(line->name, line->equals);
}

// N of a guard `tid < N` or `tid < N && ...` (of an early exit, `tid >= N`
// or `tid >= N || ...`), when no name of N is assigned in tokens [from, to];
// "" otherwise.
std::string guard_bound(const ParsedKernel& k, const Element& guard, const std::string& tid, std::size_t from,
                        std::size_t to, bool early_exit = false) {
  const auto condition = analysis::parse_expression(k.tokens, guard.condition->first + 1, guard.condition->last - 1);
  if (!condition) return "";
  const analysis::Expr* c = &*condition;
  const char* chain = early_exit ? "||" : "&&";
  while (c->kind == analysis::ExprKind::Binary && c->text == chain) c = &c->children[0];
  if (c->kind != analysis::ExprKind::Binary || c->text != (early_exit ? ">=" : "<") || !c->children[0].is_name(tid))
    return "";
  const analysis::Expr& bound = c->children[1];
  for (const std::string& name : analysis::names_in(bound))
    for (std::size_t t = from; t <= to && t < k.tokens.size(); ++t)
      if (k.tokens[t].is(name) && assigns(k, t)) return "";
  return analysis::expression_text(k.tokens, bound);
}

// The last token of `if (...) return;` or `if (...) { return; }` whose
// condition ends at `rp`, with no else; npos for any other if.
std::size_t exit_statement_end(const ParsedKernel& k, std::size_t rp) {
  std::size_t t = next_code(k, rp + 1);
  const bool braced = t < k.tokens.size() && k.tokens[t].is("{");
  if (braced) t = next_code(k, t + 1);
  if (t >= k.tokens.size() || !k.tokens[t].is("return")) return std::string::npos;
  t = next_code(k, t + 1);
  if (t >= k.tokens.size() || !k.tokens[t].is(";")) return std::string::npos;
  if (braced) {
    t = next_code(k, t + 1);
    if (t >= k.tokens.size() || !k.tokens[t].is("}")) return std::string::npos;
  }
  const std::size_t after = next_code(k, t + 1);
  return after < k.tokens.size() && k.tokens[after].is("else") ? std::string::npos : t;
}

// Whether the token lies in a loop or a switch of its function: a `return`
// there cannot become the items loop's `continue`.
bool in_loop(const ParsedKernel& k, std::size_t token) {
  for (const Element& e : k.elements) {
    if (token < e.tokens.first || token > e.tokens.last) continue;
    for (int b = e.block; b >= 0; b = k.blocks[static_cast<std::size_t>(b)].parent)
      if (k.blocks[static_cast<std::size_t>(b)].loop || k.blocks[static_cast<std::size_t>(b)].breakable) return true;
    return false;
  }
  return true;  // not in any element: do not guess
}

}  // namespace

bool assigns(const ParsedKernel& k, std::size_t t) {
  const std::size_t after = next_code(k, t + 1);
  if (after >= k.tokens.size()) return false;
  for (const char* op : {"=", "++", "--", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
    if (k.tokens[after].is(op)) return true;
  return t > 0 && (k.tokens[t - 1].is("++") || k.tokens[t - 1].is("--") || k.tokens[t - 1].is("&"));
}

std::variant<std::string, WorkItemRegion> find_work_item_region(const Grammar& g, const EditContext& context,
                                                                 bool early_exit_guard) {
  const ParsedKernel& k = g.parsed();
  const std::function<bool(std::size_t)> live = edits::live_tokens(g, context);
  std::optional<std::string> reason;
  auto because = [&](std::string why) {
    if (!reason) reason = std::move(why);
  };
  for (const Function& f : k.functions) {
    if (!f.is_kernel) continue;
    const std::size_t head = k.elements[static_cast<std::size_t>(f.header_element)].tokens.first;
    const std::size_t body_end = closing(k, k.elements[static_cast<std::size_t>(f.header_element)].tokens.last);
    // What rules the whole kernel out: blockIdx may only appear in index lines.
    std::vector<bool> in_index_line(k.tokens.size(), false);
    for (const Element& e : k.elements)
      if (e.function == static_cast<int>(&f - k.functions.data()) && index_line(k, e))
        for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) in_index_line[t] = true;
    std::optional<std::string> unfit;
    for (std::size_t t = head; t <= body_end && t < k.tokens.size(); ++t) {
      const Token& x = k.tokens[t];
      if (!live(t)) continue;
      if (x.is("__shared__") || x.is("__syncthreads")) unfit = "the kernel uses shared memory or barriers";
      if (x.is(kItemCounter)) unfit = std::string("the kernel already uses the name ") + kItemCounter;
      if (x.is("blockIdx") && !in_index_line[t]) unfit = "blockIdx is used outside the index line";
    }
    if (unfit) {
      because(*unfit);
      continue;
    }
    for (std::size_t e = 0; e < k.elements.size(); ++e) {
      const Element& index = k.elements[e];
      if (index.function != static_cast<int>(&f - k.functions.data()) || !live(index.tokens.first)) continue;
      const auto parts = index_line(k, index);
      if (!parts) continue;
      const auto [name, eq] = *parts;
      const std::string tid = k.tokens[name].text;
      // The guard: the first if of the same block after it, `if (tid < ...)`.
      std::size_t h = e + 1;
      while (h < k.elements.size() && !(k.elements[h].block == index.block && k.elements[h].kind == ElementKind::IfHeader))
        ++h;
      if (h >= k.elements.size()) {
        because("no `if (" + tid + " < ...)` follows the index line");
        continue;
      }
      const Element& guard = k.elements[h];
      const std::size_t var = next_code(k, guard.condition->first + 1), less = next_code(k, var + 1);
      // An early exit, `if (tid >= N) return;`: the region runs to the end
      // of the kernel's body, and its returns end one item (`continue`).
      const bool early = early_exit_guard && k.tokens[var].is(tid) && k.tokens[less].is(">=") &&
                         exit_statement_end(k, guard.condition->last) != std::string::npos;
      if (!early && (!k.tokens[var].is(tid) || !k.tokens[less].is("<"))) {
        because("the first if after the index line is not `if (" + tid + " < ...)`" +
                std::string(early_exit_guard ? " nor `if (" + tid + " >= ...) return;`" : ""));
        continue;
      }
      const std::size_t end = early ? body_end - 1 : if_statement_end(k, guard.condition->last);
      if (end == std::string::npos) {
        because("the guard `if (" + tid + " < ...)` has a body without braces that is not one plain statement");
        continue;
      }
      std::optional<std::string> inside;
      for (std::size_t t = index.tokens.first; t <= end; ++t) {
        const Token& x = k.tokens[t];
        if (x.is("return") && (!early || in_loop(k, t)))
          inside = early ? "a return inside a loop of the region would end the loop, not the item"
                         : "a return inside the guarded region would end every item";
        if (x.is(tid) && t != name && assigns(k, t)) inside = tid + " is assigned inside the guarded region";
      }
      // A declared index lives in the loop around the region: nothing after it may use it.
      if (index.kind == ElementKind::Declaration)
        for (std::size_t t = end + 1; t <= body_end && t < k.tokens.size(); ++t)
          if (k.tokens[t].is(tid) && live(t)) inside = tid + " is declared in the region and used after it";
      if (inside) {
        because(*inside);
        continue;
      }
      WorkItemRegion site;
      site.tid = tid;
      site.bound = guard_bound(k, guard, tid, guard.condition->last + 1, end, early);
      site.early_exit = early;
      site.index_element = e;
      site.guard_element = h;
      site.end_token = end;
      site.first_rule = site.last_rule = g.rule_of_element(e);
      for (std::size_t x = e; x < k.elements.size() && k.elements[x].tokens.first <= end; ++x)
        site.last_rule = std::max(site.last_rule, g.rule_of_element(x));
      // The index expression as written, from the rule's text.
      const std::size_t from = k.tokens[next_code(k, eq + 1)].offset;
      const Token& last = k.tokens[index.tokens.last - 1];
      const std::size_t rule_start = g.context(site.first_rule).source_offset;
      site.index_text = g.rule(site.first_rule).text.substr(from - rule_start, last.offset + last.text.size() - from);
      return site;
    }
  }
  return reason.value_or("no index line `tid = blockIdx.x * blockDim.x + threadIdx.x;` in a kernel's body");
}

}  // namespace gi::grammar

// The Analyser's counted-loop fallback (analysis/parameter_use_analyser.hpp):
// a name read inside `for (v = S; v < L; v++) BODY` is in [S, L - 1] when
// BODY never assigns v. The guards gi reads per element already give this
// for most loops; this finds the loop by its tokens alone, for the loops
// they miss:
//
//   - a loop inside a lambda's body, which the element structure keeps as
//     one statement (NiftyReg's AssembleRigid: `auto rot = [&]() { ...
//     for (int k = 0; k < 3; ++k) s += V[k * 3 + a] * U[k * 3 + b]; }`);
//   - a counter several loops share, assigned by each header (Rodinia's
//     srad reduce: `int i; ... for (i = bx * NT + df; i < bx * NT + nf; i++)
//     sum += d_sums[i];`), whose limit differs per thread: its largest value
//     here is the limit's.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/parameter_use_analyser.hpp"

namespace gi::analysis::detail {

// The last token of the statement starting at t: a block, a loop or if with
// its body (and else), or tokens up to the `;` outside brackets.
std::size_t Analyser::statement_last(std::size_t t) const {
  if (t > body_last_) return body_last_;
  if (tok(t).is("{")) return matching(t);
  if ((tok(t).is("for") || tok(t).is("while") || tok(t).is("switch")) && tok(next(t)).is("("))
    return statement_last(next(matching(next(t))));
  if (tok(t).is("if") && tok(next(t)).is("(")) {
    const std::size_t last = statement_last(next(matching(next(t))));
    return tok(next(last)).is("else") ? statement_last(next(next(last))) : last;
  }
  for (std::size_t u = t; u <= body_last_; u = next(u)) {
    if (tok(u).is("(") || tok(u).is("[") || tok(u).is("{")) u = matching(u);
    else if (tok(u).is(";")) return u;
  }
  return body_last_;
}

std::optional<Range> Analyser::counted_loop_range(const Expr& e, const std::map<std::string, Bound>& guards,
                                                  std::string& why, int depth) const {
  const std::string& v = e.text;
  const std::size_t read = e.first;
  // The innermost `for` of v whose body holds the read.
  for (std::size_t f = read; f-- > body_first_;) {
    if (!tok(f).is("for") || !tok(next(f)).is("(")) continue;
    const std::size_t open = next(f), close = matching(open);
    if (close >= read || statement_last(next(close)) < read) continue;
    // Its header: `[T] v = S; v < L (or <=); STEP`.
    std::size_t s = next(open);
    while (tok(s).kind == TokenKind::Identifier && tok(next(s)).kind == TokenKind::Identifier)
      s = next(s);  // the type of `for (int v = ...`, `for (unsigned int v = ...`
    if (!tok(s).is(v) || !tok(next(s)).is("=")) continue;  // a loop of another counter: one around it may be v's
    const std::size_t start_first = next(next(s)), start_last = expression_end(start_first);
    const std::size_t test = next(start_last);
    if (!tok(test).is(";") || !tok(next(test)).is(v)) return std::nullopt;
    const std::size_t op = next(next(test));
    if (!tok(op).is("<") && !tok(op).is("<=")) return std::nullopt;
    const std::size_t limit_first = next(op), limit_last = expression_end(limit_first);
    const std::size_t step = next(limit_last);
    if (!tok(step).is(";")) return std::nullopt;
    // The step, its tokens read as one of: v++, ++v, v += c (up by c); v *=
    // c, v <<= c, v = c * v, v = v * c (never below a start >= 0: srad's
    // `for (i = 2; i <= NT; i = 2 * i)`); c a positive whole literal.
    std::vector<std::string> st;
    for (std::size_t t = next(step); t < close; t = next(t)) st.push_back(tok(t).text);
    const auto positive = [](const std::string& c) {
      return !c.empty() && c[0] >= '1' && c[0] <= '9' && c.find_first_not_of("0123456789uUlL") == std::string::npos;
    };
    using Step = std::vector<std::string>;
    const bool adds = st == Step{v, "++"} || st == Step{"++", v} ||
                      (st.size() == 3 && st[0] == v && st[1] == "+=" && positive(st[2]));
    const bool multiplies =
        (st.size() == 3 && st[0] == v && (st[1] == "*=" || st[1] == "<<=") && positive(st[2])) ||
        (st.size() == 5 && st[0] == v && st[1] == "=" && st[3] == "*" &&
         ((st[2] == v && positive(st[4])) || (positive(st[2]) && st[4] == v)));
    if (!adds && !multiplies) return std::nullopt;
    // The body assigns neither v nor a name of the start or the limit (the
    // guards at the read hold for them as the loop began), and the limit
    // does not read v.
    std::set<std::string> fixed = {v};
    for (std::size_t t = limit_first; t <= limit_last; t = next(t)) {
      if (tok(t).is(v)) return std::nullopt;
      if (tok(t).kind == TokenKind::Identifier) fixed.insert(tok(t).text);
    }
    for (std::size_t t = start_first; t <= start_last; t = next(t))
      if (tok(t).kind == TokenKind::Identifier) fixed.insert(tok(t).text);
    for (std::size_t t = next(close); t <= statement_last(next(close)); t = next(t))
      if (fixed.count(tok(t).text) && tok(t).kind == TokenKind::Identifier &&
          (kAssignments.count(tok(next(t)).text) || tok(next(t)).is("++") || tok(next(t)).is("--") ||
           tok(prev(t)).is("++") || tok(prev(t)).is("--")))
        return std::nullopt;
    const auto start = parse(start_first, start_last);
    const auto limit = parse(limit_first, limit_last);
    if (!start || !limit) return std::nullopt;
    const auto lo = eval(*start, without(guards, v), why, depth + 1);
    const auto hi = eval(*limit, without(guards, v), why, depth + 1);
    if (!lo || !hi || !hi->hi || lo->real || hi->real || (multiplies && !lo->lo.non_negative())) return std::nullopt;
    return Range{lo->lo, tok(op).is("<=") ? *hi->hi : *hi->hi - SymbolicSize::constant(1)};
  }
  return std::nullopt;
}

}  // namespace gi::analysis::detail

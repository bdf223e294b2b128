#include "analysis/straight_line_value.hpp"

#include <set>
#include <vector>

#include "analysis/token_ranges.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::TokenKind;

// What one occurrence of the name does to it.
enum class Effect { Read, Define, Update, Unfollowable };

struct Occurrence {
  Effect effect = Effect::Read;
  StraightLineUpdate update;          // Update
  std::size_t first = 0, last = 0;    // Define: the value's tokens
};

class Walk {
 public:
  Walk(const grammar::ParsedKernel& k, int function, const std::string& name) : k_(k), name_(name) {
    for (std::size_t e = 0; e < k.elements.size(); ++e)
      if (k.elements[e].function == function && k.elements[e].kind != ElementKind::FunctionHeader &&
          k.elements[e].kind != ElementKind::Comment)
        elements_.push_back(e);
  }

  std::optional<StraightLineValue> run(std::size_t use, std::string& why) {
    // A name the function neither declares nor assigns (a parameter, a
    // macro) has no value from the path, and nothing to refuse.
    if (!local()) return std::nullopt;
    std::size_t at = elements_.size();
    for (std::size_t i = 0; i < elements_.size(); ++i)
      if (el(i).tokens.first <= use && use <= el(i).tokens.last) at = i;
    if (at == elements_.size()) return std::nullopt;
    if (el(at).kind == ElementKind::LoopHeader) {
      // Read in a loop's header, which runs again after each pass: the
      // value is the one before the loop only where the loop never assigns it.
      std::size_t loop_last = el(at).tokens.last;
      if (at + 1 < elements_.size())
        loop_last = el(at + 1).kind == ElementKind::BlockOpen ? closing(k_.tokens, el(at + 1).tokens.first)
                                                              : el(at + 1).tokens.last;
      if (assigns(el(at).tokens.first, loop_last)) {
        why = refusal("it is read in the loop header on line " + line_of(at) + ", and the loop assigns it");
        return std::nullopt;
      }
    }
    if (el(at).tokens.first < use)
      if (const auto found = scan(el(at).tokens.first, use - 1, why, use)) return found;
    if (!why.empty()) return std::nullopt;
    for (std::size_t i = at; i-- > 0;) {
      const Element& e = el(i);
      switch (e.kind) {
        case ElementKind::BlockClose: {
          // A block before the read: the value must not depend on whether
          // or how often it ran.
          const std::size_t open = opening(i);
          const std::size_t h = header_before(open);
          const std::size_t from = h < elements_.size() ? el(h).tokens.first : el(open).tokens.first;
          if (assigns(from, e.tokens.last)) {
            if (auto c = conditional_definition(i)) return c;
            if (passes_of(h, open)) {
              i = h;
              break;
            }
            why = refusal("it is assigned in the block from line " + line_of(open) + " to line " + line_of(i) +
                          ", which may or may not run");
            return std::nullopt;
          }
          i = h < elements_.size() ? h : open;
          break;
        }
        case ElementKind::BlockOpen: {
          // The block around the read: a loop that assigns the name carries
          // its value over from the previous iteration.
          const std::size_t h = header_before(i);
          if (h < elements_.size() && el(h).kind == ElementKind::LoopHeader &&
              assigns(el(h).tokens.first, closing(k_.tokens, e.tokens.first))) {
            std::string step_why;
            if (const auto step = lockstep(h, i, step_why)) {
              updates_.push_back(*step);
              i = h;
              break;
            }
            why = refusal("the loop on line " + line_of(h) + " assigns it" +
                          (step_why.empty() ? "" : " (" + step_why + ")") +
                          ", so its value may come from the previous iteration");
            return std::nullopt;
          }
          if (h < elements_.size()) {
            if (assigns(el(h).tokens.first, el(h).tokens.last)) {
              why = refusal("the header on line " + line_of(h) + " assigns it");
              return std::nullopt;
            }
            i = h;
          }
          break;
        }
        case ElementKind::IfHeader:
        case ElementKind::ElseHeader:
        case ElementKind::LoopHeader:
        case ElementKind::SwitchHeader: {
          // The header of a braceless body just passed (or of the read's
          // own): a loop repeats that body.
          const std::size_t body_last = i + 1 < elements_.size() ? el(i + 1).tokens.last : e.tokens.last;
          const std::size_t last = e.kind == ElementKind::LoopHeader ? body_last : e.tokens.last;
          // The read in the loop's own braceless body (`for (...) out[k++] = v;`).
          const bool around_read = e.kind == ElementKind::LoopHeader && i + 1 == at;
          if (around_read && assigns(e.tokens.first, last)) {
            std::string step_why;
            if (const auto step = lockstep(i, i + 1, step_why)) {
              updates_.push_back(*step);
              break;
            }
          }
          if (assigns(e.tokens.first, last)) {
            why = refusal("the " + std::string(e.kind == ElementKind::LoopHeader ? "loop" : "condition") +
                          " on line " + line_of(i) + " assigns it");
            return std::nullopt;
          }
          break;
        }
        case ElementKind::CaseLabel:
          why = refusal("a jump target on line " + line_of(i) + " stands between its definition and the read");
          return std::nullopt;
        case ElementKind::Preprocessor:
          if (e.conditional) {
            why = refusal("a preprocessor conditional on line " + line_of(i) + " stands between");
            return std::nullopt;
          }
          break;
        default: {
          if (e.braceless_body) {
            if (assigns(e.tokens.first, e.tokens.last)) {
              if (auto c = conditional_definition(i)) return c;
              if (const std::size_t h = header_before(i); passes_of(h, i)) {
                i = h;
                break;
              }
              why = refusal("it is assigned on line " + line_of(i) + " under a condition or loop");
              return std::nullopt;
            }
            break;
          }
          if (const auto found = scan(e.tokens.first, e.tokens.last, why)) return found;
          if (!why.empty()) return std::nullopt;
          if (e.kind == ElementKind::Declaration && declares(e)) {
            why = refusal("it is declared without a value on line " + line_of(i));
            return std::nullopt;
          }
        }
      }
    }
    if (!updates_.empty()) why = refusal("gi sees updates but no definition before the read");
    return std::nullopt;
  }

 private:
  const grammar::ParsedKernel& k_;
  const std::string name_;
  std::vector<std::size_t> elements_;  // the function's elements, comments left out
  std::vector<StraightLineUpdate> updates_;  // seen so far, walking backwards

  const Element& el(std::size_t i) const { return k_.elements[elements_[i]]; }
  const grammar::Token& tok(std::size_t t) const { return k_.tokens[t]; }
  std::string line_of(std::size_t i) const { return std::to_string(tok(el(i).tokens.first).line); }
  std::string refusal(const std::string& why) const { return "the value of '" + name_ + "' at the read: " + why; }

  std::size_t next(std::size_t t) const { return next_code(k_.tokens, t + 1); }
  std::size_t prev(std::size_t t) const { return prev_code(k_.tokens, t); }

  bool local() const {
    for (std::size_t i = 0; i < elements_.size(); ++i)
      if ((el(i).kind == ElementKind::Declaration && declares(el(i))) || assigns(el(i).tokens.first, el(i).tokens.last))
        return true;
    return false;
  }

  bool declares(const Element& e) const {
    for (const std::string& d : e.declares)
      if (d == name_) return true;
    return false;
  }

  // The BlockOpen matching the BlockClose at element i.
  std::size_t opening(std::size_t i) const {
    int depth = 0;
    for (std::size_t j = i + 1; j-- > 0;) {
      if (el(j).kind == ElementKind::BlockClose) ++depth;
      if (el(j).kind == ElementKind::BlockOpen && --depth == 0) return j;
    }
    return 0;
  }

  // The header element right before element i, if it is one.
  std::size_t header_before(std::size_t i) const {
    if (i == 0) return elements_.size();
    const ElementKind kind = el(i - 1).kind;
    const bool header = kind == ElementKind::IfHeader || kind == ElementKind::ElseHeader ||
                        kind == ElementKind::LoopHeader || kind == ElementKind::SwitchHeader;
    return header ? i - 1 : elements_.size();
  }

  // The statement ending at element `end` (a braceless body, or a block's
  // closing brace): its header's element, and the expression of `name = E;`
  // when that is the whole body; nullopt for anything else.
  struct Body {
    std::size_t header = 0;
    std::size_t first = 1, last = 0;  // E
  };
  std::optional<Body> one_assignment_body(std::size_t end) const {
    std::size_t statement = end;
    Body b;
    if (el(end).kind == ElementKind::BlockClose) {
      const std::size_t open = opening(end);
      if (open + 2 != end) return std::nullopt;  // one element inside
      statement = open + 1;
      b.header = header_before(open);
    } else {
      if (!el(end).braceless_body) return std::nullopt;
      b.header = header_before(end);
    }
    if (b.header >= elements_.size() || el(statement).kind != ElementKind::Statement) return std::nullopt;
    const std::size_t t = next_code(k_.tokens, el(statement).tokens.first);
    if (tok(t).kind != TokenKind::Identifier || tok(t).text != name_ || !tok(next(t)).is("=")) return std::nullopt;
    const Occurrence o = occurrence(t);
    if (o.effect != Effect::Define || !tok(next(o.last)).is(";")) return std::nullopt;
    // Nothing else in it changes the name (`l = l++`).
    if (assigns(next(next(t)), el(statement).tokens.last)) return std::nullopt;
    b.first = o.first;
    b.last = o.last;
    return b;
  }

  // `if (C) name = A;` or `if (C) name = A; else name = B;` ending at element
  // `end`, or an else-if chain of such links, no test assigning the name:
  // the conditional value, with the updates seen after it.
  std::optional<StraightLineValue> conditional_definition(std::size_t end) const {
    // An if whose else holds the read: its own body never ran there.
    if (end + 1 < elements_.size() && el(end + 1).kind == ElementKind::ElseHeader) return std::nullopt;
    const auto last_body = one_assignment_body(end);
    if (!last_body) return std::nullopt;
    std::optional<Body> if_body = last_body, else_body;
    if (el(last_body->header).kind == ElementKind::ElseHeader) {
      if (last_body->header == 0) return std::nullopt;
      else_body = last_body;
      if_body = one_assignment_body(last_body->header - 1);
      if (!if_body) return std::nullopt;
    }
    std::size_t h = if_body->header;
    if (el(h).kind != ElementKind::IfHeader) return std::nullopt;
    // `else if (C) name = A;`: a link of a chain, each of whose links before
    // assigns the name too; walked back to the chain's first if.
    std::vector<StraightLineValue::Link> links;  // last first
    for (;;) {
      StraightLineValue::Link link;
      if (!condition_of(h, link)) return std::nullopt;
      link.first = if_body->first;
      link.last = if_body->last;
      links.push_back(link);
      const std::size_t outer = h > 0 ? header_before(h) : elements_.size();
      if (outer >= elements_.size()) break;
      // The braceless body of another header that is no `else` (`if (a)
      // if (C)`, `for (...) if (C)`): the value before it need not hold
      // where C fails.
      if (el(outer).kind != ElementKind::ElseHeader || outer == 0) return std::nullopt;
      if_body = one_assignment_body(outer - 1);
      if (!if_body || el(if_body->header).kind != ElementKind::IfHeader) return std::nullopt;
      h = if_body->header;
    }
    StraightLineValue v{links.back().first, links.back().last, {updates_.rbegin(), updates_.rend()},
                        tok(links.back().first).line};
    v.condition_first = links.back().condition_first;
    v.condition_last = links.back().condition_last;
    v.chain.assign(links.rbegin() + 1, links.rend());
    if (else_body) {
      v.else_first = else_body->first;
      v.else_last = else_body->last;
    }
    v.before = el(h).tokens.first;
    v.name = name_;
    return v;
  }

  // The test of the if at element h, when it assigns nothing (not the name,
  // so that it reads one value throughout); false for `if constexpr`.
  bool condition_of(std::size_t h, StraightLineValue::Link& link) const {
    const std::size_t paren = next(el(h).tokens.first);
    if (!tok(paren).is("(")) return false;  // `if constexpr`
    const std::size_t close = closing(k_.tokens, paren);
    if (close <= next(paren) || assigns(paren, close)) return false;
    link.condition_first = next(paren);
    link.condition_last = prev(close);
    return true;
  }

  Occurrence occurrence(std::size_t t) const {
    Occurrence o;
    const std::size_t p = prev(t), n = next(t);
    if (tok(p).is(".") || tok(p).is("->") || tok(p).is("::")) return o;  // someone else's member
    const std::string& after = n < k_.tokens.size() ? tok(n).text : std::string();
    const bool address_taken =
        tok(p).is("&") && (tok(prev(p)).is("(") || tok(prev(p)).is(",") || tok(prev(p)).is("="));
    if (after == "=") {
      o.effect = Effect::Define;
      o.first = next(n);
      o.last = expression_end(k_.tokens, o.first, k_.tokens.size() - 1);
    } else if (after == "++" || tok(p).is("++") || after == "--" || tok(p).is("--")) {
      o.effect = Effect::Update;
      o.update.op = after == "++" || tok(p).is("++") ? '+' : '-';
      o.update.amount = 1;
    } else if (after == "+=" || after == "-=" || after == "*=") {
      o.effect = Effect::Update;
      o.update.op = after[0];
      o.update.first = next(n);
      o.update.last = expression_end(k_.tokens, o.update.first, k_.tokens.size() - 1);
    } else if (after == "/=" || after == "%=" || after == "&=" || after == "|=" || after == "^=" || after == "<<=" ||
               after == ">>=" || address_taken) {
      o.effect = Effect::Unfollowable;
    }
    o.update.line = tok(t).line;
    return o;
  }

  bool assigns(std::size_t first, std::size_t last) const { return assigns(name_, first, last); }

  bool assigns(const std::string& name, std::size_t first, std::size_t last) const {
    for (std::size_t t = first; t <= last && t < k_.tokens.size(); ++t)
      if (tok(t).kind == TokenKind::Identifier && tok(t).text == name && occurrence(t).effect != Effect::Read)
        return true;
    return false;
  }

  // The loop with header h and body opening at element `open` steps the
  // name once per pass in lockstep with its counter: a `for (v = s; ...;
  // ++v)` (or v++, v += 1) whose body assigns neither v nor any name of s,
  // holds no `continue` or `goto`, and assigns the name in one statement of
  // its own level only, by `k++`, `k--`, `k += e` or `k -= e` with `e` the
  // same on every pass. Then the passes before this one added (v - s) steps.
  // `body`: the element that opens the body's block, or the braceless body.
  std::optional<StraightLineUpdate> lockstep(std::size_t h, std::size_t body, std::string& why) const {
    const Element& header = el(h);
    if (!header.is_for) return std::nullopt;
    const std::size_t paren = next(header.tokens.first);
    if (!tok(paren).is("(")) return std::nullopt;
    const auto clauses = split(k_.tokens, next(paren), prev(closing(k_.tokens, paren)), ";");
    if (clauses.size() != 3) return std::nullopt;
    // The counter: the increment's only name.
    const auto [inc_first, inc_last] = clauses[2];
    std::size_t counter = 0;
    std::size_t names = 0;
    for (std::size_t t = inc_first; t <= inc_last; ++t)
      if (tok(t).kind == TokenKind::Identifier) counter = t, ++names;
    if (names != 1) return std::nullopt;
    const std::string v = tok(counter).text;
    const auto texts = [&](std::size_t a, std::size_t b) {
      std::string out;
      for (std::size_t t = a; t <= b; t = next(t)) out += tok(t).text;
      return out;
    };
    const std::string inc = texts(inc_first, inc_last);
    if (inc != "++" + v && inc != v + "++" && inc != v + "+=1") {
      why = "its counter '" + v + "' steps other than by 1";
      return std::nullopt;
    }
    // The start: `int v = s` or `v = s`.
    const auto [init_first, init_last] = clauses[0];
    std::size_t eq = init_last + 1;
    for (std::size_t t = init_first; t <= init_last; ++t)
      if (tok(t).is("=") && t > init_first && tok(prev(t)).text == v) eq = t;
    if (eq > init_last) return std::nullopt;
    const bool braced = el(body).kind == ElementKind::BlockOpen;
    const std::size_t body_first = el(body).tokens.first;
    const std::size_t body_last = braced ? closing(k_.tokens, body_first) : el(body).tokens.last;
    if (assigns(v, body_first, body_last)) {
      why = "its counter '" + v + "' is assigned in the body";
      return std::nullopt;
    }
    for (std::size_t t = next(eq); t <= init_last; t = next(t))
      if (tok(t).kind == TokenKind::Identifier && (tok(t).text == name_ || assigns(tok(t).text, body_first, body_last))) {
        why = "its counter's start names '" + tok(t).text + "', which the body assigns";
        return std::nullopt;
      }
    if (assigns(header.tokens.first, header.tokens.last)) return std::nullopt;
    // One step, at the body's own level.
    std::optional<StraightLineUpdate> step;
    int depth = 0;
    for (std::size_t i = braced ? body + 1 : body; i < elements_.size() && el(i).tokens.first <= body_last; ++i) {
      const Element& e = el(i);
      if (braced && e.tokens.first == body_last) break;  // the body's closing brace
      if (e.kind == ElementKind::BlockOpen) ++depth;
      if (e.kind == ElementKind::BlockClose) --depth;
      for (std::size_t t = e.tokens.first; t <= e.tokens.last && t <= body_last; ++t) {
        if (tok(t).is("continue") || tok(t).is("goto")) {
          why = "a '" + tok(t).text + "' on line " + std::to_string(tok(t).line) + " may skip its step";
          return std::nullopt;
        }
        if (tok(t).kind != TokenKind::Identifier || tok(t).text != name_) continue;
        const Occurrence o = occurrence(t);
        if (o.effect == Effect::Read) continue;
        const bool own_level = depth == 0 && (!e.braceless_body || i == body) && e.kind != ElementKind::LoopHeader &&
                               e.kind != ElementKind::IfHeader && e.kind != ElementKind::SwitchHeader;
        if (step || o.effect != Effect::Update || o.update.op == '*' || !own_level) {
          why = "it is assigned on line " + std::to_string(tok(t).line) +
                (step ? " a second time in a pass" : !own_level ? " under a condition or inner loop" : " other than by a step");
          return std::nullopt;
        }
        step = o.update;
      }
    }
    if (!step) return std::nullopt;
    // The same step on every pass: its operand names neither the counter nor
    // anything the loop assigns (`k += i` sums 0 + 1 + ... + (i - 1), not i * i).
    for (std::size_t t = step->first; t <= step->last && step->first <= step->last; t = next(t))
      if (tok(t).kind == TokenKind::Identifier &&
          (tok(t).text == v || assigns(tok(t).text, header.tokens.first, body_last))) {
        why = "its step names '" + tok(t).text + "', which changes from pass to pass";
        return std::nullopt;
      }
    step->counter = counter;
    step->start_first = next(eq);
    step->start_last = init_last;
    return step;
  }

  // Whether the loop with header h (none: h past the end) and body `body`
  // ends before the read and steps the name once per pass: then all its
  // passes are an update (StraightLineUpdate::after_loop).
  bool passes_of(std::size_t h, std::size_t body) {
    if (h >= elements_.size() || el(h).kind != ElementKind::LoopHeader) return false;
    std::string ignored;
    auto step = lockstep(h, body, ignored);
    if (!step || !loop_end(h, *step)) return false;
    updates_.push_back(*step);
    return true;
  }

  // The passes of the for loop at element h, whose lockstep step is `step`,
  // end where its condition `v < e` (or `v <= e`) fails: e's tokens into
  // the step, marked as after the loop. False for any other condition, or
  // an e that names the counter or anything the loop assigns.
  bool loop_end(std::size_t h, StraightLineUpdate& step) const {
    const std::size_t paren = next(el(h).tokens.first);
    const std::size_t close = closing(k_.tokens, paren);
    const auto clauses = split(k_.tokens, next(paren), prev(close), ";");
    if (clauses.size() != 3 || clauses[1].first > clauses[1].second) return false;
    const auto [first, last] = clauses[1];
    const std::string& v = tok(step.counter).text;
    if (!tok(first).is(v)) return false;
    const std::size_t op = next(first);
    if (!tok(op).is("<") && !tok(op).is("<=")) return false;
    const std::size_t body_last = el(h + 1).kind == ElementKind::BlockOpen
                                      ? closing(k_.tokens, el(h + 1).tokens.first)
                                      : el(h + 1).tokens.last;
    for (std::size_t t = next(op); t <= last; t = next(t)) {
      // An operator below `<` would make the condition more than `v < e`.
      static const std::set<std::string> lower = {"<", ">", "<=", ">=", "==", "!=", "&", "^", "|", "&&", "||", "?", ",", "="};
      if (lower.count(tok(t).text)) return false;
      if (tok(t).kind == TokenKind::Identifier && (tok(t).text == v || assigns(tok(t).text, el(h).tokens.first, body_last)))
        return false;
    }
    step.after_loop = true;
    step.end_first = next(op);
    step.end_last = last;
    step.end_inclusive = tok(op).is("<=");
    return true;
  }

  // Tokens [first, last] read backwards: the definition, with the updates
  // seen so far; an assignment gi cannot follow refuses.
  // `use`: the read, when these are the tokens before it in its own
  // statement: an assignment whose value holds the read (`k = k * 2`) has not
  // happened yet when the read runs.
  std::optional<StraightLineValue> scan(std::size_t first, std::size_t last, std::string& why,
                                        std::size_t use = 0) {
    // A loop or block inside one element (a lambda's body, which the
    // element structure does not split) is no straight line.
    std::size_t control = 0;  // the first such keyword, else the first brace
    for (std::size_t t = first; t <= last && t < k_.tokens.size(); ++t) {
      static const std::set<std::string> flow = {"for", "while", "do", "if", "switch", "goto"};
      if (tok(t).kind == TokenKind::Identifier && flow.count(tok(t).text)) {
        control = t;
        break;
      }
      if (control == 0 && (tok(t).is("{") || tok(t).is("}"))) control = t;
    }
    for (std::size_t t = last + 1; t-- > first;) {
      if (tok(t).kind != TokenKind::Identifier || tok(t).text != name_) continue;
      const Occurrence o = occurrence(t);
      const auto holds_use = [&](std::size_t a, std::size_t b) { return use > 0 && a <= use && use <= b; };
      if ((o.effect == Effect::Define && holds_use(o.first, o.last)) ||
          (o.effect == Effect::Update && holds_use(o.update.first, o.update.last)))
        continue;
      if (o.effect != Effect::Read && control != 0) {
        why = refusal("line " + std::to_string(tok(control).line) + ": '" + tok(control).text +
                      "' within one statement (a lambda's body) stands between its assignment and the read");
        return std::nullopt;
      }
      if (o.effect == Effect::Define) {
        StraightLineValue v{o.first, o.last, {updates_.rbegin(), updates_.rend()}, tok(t).line};
        v.name = name_;
        return v;
      }
      if (o.effect == Effect::Update) updates_.push_back(o.update);
      if (o.effect == Effect::Unfollowable) {
        why = refusal("line " + std::to_string(tok(t).line) + " changes it in a way gi cannot follow");
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
};

}  // namespace

std::optional<StraightLineValue> straight_line_value(const grammar::ParsedKernel& k, int function,
                                                     const std::string& name, std::size_t use, std::string& why) {
  return Walk(k, function, name).run(use, why);
}

}  // namespace gi::analysis

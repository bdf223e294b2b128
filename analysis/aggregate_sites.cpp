#include "analysis/aggregate_sites.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "analysis/cas_helpers.hpp"
#include "analysis/privatise_sites.hpp"
#include "analysis/expression.hpp"
#include "analysis/uniformity.hpp"

namespace gi::analysis {
namespace {

using grammar::Element;
using grammar::ElementKind;
using grammar::ParsedKernel;
using grammar::Token;
using grammar::TokenKind;

std::size_t next_code(const std::vector<Token>& t, std::size_t i) {
  while (i < t.size() && t[i].kind == TokenKind::Comment) ++i;
  return i;
}

// The element's code tokens without a trailing ';'.
std::pair<std::size_t, std::size_t> statement_range(const ParsedKernel& k, const Element& e) {
  std::size_t first = next_code(k.tokens, e.tokens.first), last = e.tokens.last;
  while (last > first && (k.tokens[last].is(";") || k.tokens[last].kind == TokenKind::Comment)) --last;
  return {first, last};
}

bool is_return(const ParsedKernel& k, const Element& e) {
  if (e.kind != ElementKind::Statement) return false;
  const std::size_t w = next_code(k.tokens, e.tokens.first);
  return w < k.tokens.size() && k.tokens[w].is("return");
}

// The element type as atomics spell it ("unsigned" is "unsigned int").
std::string canonical_type(std::string type) {
  if (type == "unsigned") return "unsigned int";
  if (type == "unsigned long long") return "unsigned long long int";
  return type;
}

// Whether the built-in operation takes a pointer to `type` (canonical).
bool operation_takes(const AtomicOperation& op, const std::string& type) {
  static const std::set<std::string> integers = {"int", "unsigned int", "unsigned long long int"};
  if (op.kind == "add") return integers.count(type) || type == "float" || type == "double";
  return integers.count(type) > 0;
}

// Whether evaluating `e` changes anything (an assignment, or a call other than a pure math function).
bool has_effects(const Expr& e) {
  if (is_assignment(e)) return true;
  if (e.kind == ExprKind::Call && !is_pure_math_function(e.callee())) return true;
  for (const Expr& c : e.children)
    if (has_effects(c)) return true;
  return false;
}

// The pointer parameter an address points into: p, &p[i], p + i, i + p,
// each also cast to another element type: (int*)p.
const grammar::Param* pointee(const grammar::Function& f, const Expr& address) {
  const Expr* base = &address;
  if (base->kind == ExprKind::Cast) base = &base->children[0];
  if (base->kind == ExprKind::Unary && base->text == "&" && base->children[0].kind == ExprKind::Index)
    base = &base->children[0].children[0];
  else if (base->kind == ExprKind::Binary && base->text == "+")
    base = base->children[0].kind == ExprKind::Name ? &base->children[0] : &base->children[1];
  if (base->kind != ExprKind::Name) return nullptr;
  for (const grammar::Param& p : f.params)
    if (p.pointer && p.name == base->text) return &p;
  return nullptr;
}

// The element type an address names: the cast's pointee, else the parameter's.
std::string element_type(const grammar::Param& p, const Expr& address) {
  if (address.kind == ExprKind::Cast) {
    std::string t = address.text;
    while (!t.empty() && (t.back() == '*' || t.back() == ' ')) t.pop_back();
    if (t.rfind("const ", 0) == 0) t = t.substr(6);
    return canonical_type(t);
  }
  return canonical_type(p.base_type);
}

// The two kinds of atomic site: aggregate's (one address for the whole
// block) and privatise's (an address taken from data, analysis/privatise_sites.hpp).
enum class SiteRule { UniformAddress, DataAddress };

// The index of an address &p[i], p + i or i + p into parameter p (no cast); nullptr otherwise.
const Expr* data_index(const Expr& address, const std::string& p) {
  if (address.kind == ExprKind::Unary && address.text == "&" && address.children[0].kind == ExprKind::Index &&
      address.children[0].children[0].is_name(p))
    return &address.children[0].children[1];
  if (address.kind == ExprKind::Binary && address.text == "+") {
    if (address.children[0].is_name(p)) return &address.children[1];
    if (address.children[1].is_name(p)) return &address.children[0];
  }
  return nullptr;
}

class KernelSites {
 public:
  KernelSites(const ParsedKernel& k, int function, const std::function<bool(std::size_t)>& live,
              const std::map<std::string, CasHelper>& helpers, SiteRule rule, AggregateSites& out)
      : k_(k), f_(k.functions[static_cast<std::size_t>(function)]), function_(function), live_(live),
        helpers_(helpers), rule_(rule), out_(out), uniformity_(k, function, live) {}

  void run() {
    const Element& header = k_.elements[static_cast<std::size_t>(f_.header_element)];
    const std::size_t open = header.tokens.last;
    if (!k_.tokens[open].is("{")) return;
    std::size_t close = open;
    for (int depth = 0; close < k_.tokens.size(); ++close) {
      if (k_.tokens[close].is("{")) ++depth;
      if (k_.tokens[close].is("}") && --depth == 0) break;
    }
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& e = k_.elements[i];
      if (e.tokens.first == close && e.kind == ElementKind::BlockClose) body_close_ = i;
      if (e.function == function_ && i > static_cast<std::size_t>(f_.header_element) && !body_first_ &&
          e.kind != ElementKind::Comment && e.tokens.first > open)
        body_first_ = i;
    }
    if (!body_close_ || !body_first_) return;
    body_close_token_ = close;
    // The rewrite declares names starting gi_; a kernel that has such names already could clash.
    for (std::size_t t = open; t <= close && t < k_.tokens.size(); ++t)
      if (k_.tokens[t].kind == TokenKind::Identifier && k_.tokens[t].text.rfind("gi_", 0) == 0 && live_(t))
        no_exit_ = "the kernel already uses a name starting gi_ (" + k_.tokens[t].text + ")";
    if (!no_exit_) find_exit();
    // A private copy lives in dynamic shared memory, which the kernel must not use itself.
    if (rule_ == SiteRule::DataAddress && !no_exit_)
      for (std::size_t t = open; t <= close && t < k_.tokens.size(); ++t)
        if (k_.tokens[t].is("extern") && live_(t) && next_code(k_.tokens, t + 1) < k_.tokens.size() &&
            k_.tokens[next_code(k_.tokens, t + 1)].is("__shared__"))
          no_exit_ = "the kernel has dynamic shared memory of its own";
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& e = k_.elements[i];
      if (e.function != function_ || e.kind != ElementKind::Statement || !live_(e.tokens.first)) continue;
      const auto [first, last] = statement_range(k_, e);
      const auto op = operation_of(k_.tokens[first].text);
      if (!op) continue;
      const std::string where = "line " + std::to_string(k_.tokens[first].line) + ": ";
      std::string why;
      const auto call = parse_expression(k_.tokens, first, last, &why);
      if (!call || call->kind != ExprKind::Call || call->children.size() != 3) {
        out_.refusals.push_back(where + op->function + ": " + (call ? "not a call of two arguments" : why));
        continue;
      }
      const std::string text = expression_text(k_.tokens, *call);
      if (auto refusal = refuse(i, *op, *call)) {
        out_.refusals.push_back(where + text + ": " + *refusal);
        continue;
      }
      AggregateSite site;
      site.element = i;
      site.function = function_;
      site.operation = *op;
      site.address = expression_text(k_.tokens, call->children[1]);
      site.value = expression_text(k_.tokens, call->children[2]);
      const grammar::Param& buffer = *pointee(f_, call->children[1]);
      site.type = element_type(buffer, call->children[1]);
      site.buffer = buffer.name;
      if (const Expr* index = data_index(call->children[1], buffer.name)) site.index = expression_text(k_.tokens, *index);
      site.body_first_element = *body_first_;
      site.body_close_element = *body_close_;
      site.exit = exit_;
      site.trailing_returns = trailing_returns_;
      out_.sites.push_back(std::move(site));
    }
  }

 private:
  // A built-in atomic that commutes with itself, or a helper made of CAS.
  std::optional<AtomicOperation> operation_of(const std::string& name) const {
    if (auto op = combinable_atomic(name)) return op;
    if (auto h = helpers_.find(name); h != helpers_.end()) return h->second.operation;
    return std::nullopt;
  }
  // Whether the operation takes a pointer to `type`: a helper only its own.
  bool takes(const AtomicOperation& op, const std::string& type) const {
    if (auto h = helpers_.find(op.function); h != helpers_.end()) return h->second.type == type;
    return operation_takes(op, type);
  }

  // One `if (COND) return;` in the outermost block may become a predicate;
  // any other return means some threads never reach the kernel's end.
  void find_exit() {
    std::vector<std::size_t> returns;
    for (std::size_t i = 0; i < k_.elements.size(); ++i)
      if (k_.elements[i].function == function_ && live_(k_.elements[i].tokens.first) && is_return(k_, k_.elements[i])) {
        if (trailing(i))
          trailing_returns_.push_back(i);
        else
          returns.push_back(i);
      }
    if (returns.empty()) return;
    if (returns.size() > 1) {
      no_exit_ = "the kernel returns in " + std::to_string(returns.size()) + " places";
      return;
    }
    const std::size_t r = returns[0];
    const auto [rf, rl] = statement_range(k_, k_.elements[r]);
    if (rf != rl) {
      no_exit_ = "the kernel returns a value";
      return;
    }
    // The header before it: `if (COND) return;` or `if (COND) { return; }`.
    std::size_t h = r;
    while (h-- > 0 && k_.elements[h].kind == ElementKind::Comment) {}
    std::size_t last = r;
    if (k_.elements[h].kind == ElementKind::BlockOpen) {
      std::size_t c = r + 1;
      while (c < k_.elements.size() && k_.elements[c].kind == ElementKind::Comment) ++c;
      if (c >= k_.elements.size() || k_.elements[c].kind != ElementKind::BlockClose) {
        no_exit_ = "the kernel's return is not alone in its if";
        return;
      }
      last = c;
      while (h-- > 0 && k_.elements[h].kind == ElementKind::Comment) {}
    }
    const Element& header = k_.elements[h];
    if (header.kind != ElementKind::IfHeader || !header.condition ||
        header.block != static_cast<int>(f_.block)) {
      no_exit_ = "the kernel's return is not an early exit `if (...) return;` in its outermost block";
      return;
    }
    std::size_t after = last + 1;
    while (after < k_.elements.size() && k_.elements[after].kind == ElementKind::Comment) ++after;
    if (after < k_.elements.size() && k_.elements[after].kind == ElementKind::ElseHeader) {
      no_exit_ = "the kernel's early exit has an else";
      return;
    }
    std::string why;
    const auto condition = parse_expression(k_.tokens, header.condition->first + 1, header.condition->last - 1, &why);
    if (!condition || has_effects(*condition)) {
      no_exit_ = "the early exit's condition " + (condition ? std::string("has side effects") : why);
      return;
    }
    exit_ = EarlyExit{h, last, expression_text(k_.tokens, *condition)};
  }

  // Why one address for the whole block cannot be re-evaluated where the kernel ends, or nullopt.
  std::optional<std::string> address_not_uniform(std::size_t element, const Expr& address) const {
    if (auto why = uniformity_.why_not(address, element)) return "its address differs between threads (" + *why + ")";
    for (const std::string& name : names_in(address)) {
      if (name == "blockIdx" || name == "blockDim" || name == "gridDim") continue;
      const Element& e = k_.elements[element];
      const int d = grammar::resolve(k_, name, e.block, e.pos);
      if (d < 0) continue;  // a constant the file does not declare
      const bool param = std::any_of(f_.params.begin(), f_.params.end(), [&](const grammar::Param& p) { return p.name == name; }) &&
                         k_.declarations[static_cast<std::size_t>(d)].block == f_.block;
      if (!param) return "its address uses " + name + ", which is not a parameter (the block's sum is added where the kernel ends)";
      if (uniformity_.assigned(d)) return "its address uses parameter " + name + ", which the kernel assigns";
    }
    return std::nullopt;
  }

  // Whether two atomics on one buffer commute although their operations or
  // element types differ: they update different words (constant indices,
  // one element size), or they are the two halves of a float minimum or
  // maximum on the float's bits (analysis/aggregate_sites.hpp).
  bool commute(std::size_t a, const grammar::Param& p, const Expr& call_a, std::size_t b, const Expr& call_b) const {
    const auto word_a = constant_word(p, call_a.children[1]), word_b = constant_word(p, call_b.children[1]);
    if (word_a >= 0 && word_b >= 0 && word_a != word_b) return true;
    if (word_a < 0 || word_a != word_b) return false;
    const SignHalf ha = sign_half(a, p, call_a), hb = sign_half(b, p, call_b);
    if (ha.operand.empty() || ha.operand != hb.operand || ha.non_negative == hb.non_negative) return false;
    const SignHalf& ints = ha.non_negative ? ha : hb;
    const SignHalf& uints = ha.non_negative ? hb : ha;
    // int min with unsigned max is a float minimum; int max with unsigned min a maximum.
    return (ints.kind == "min" && uints.kind == "max") || (ints.kind == "max" && uints.kind == "min");
  }

  // The word index of an address &p[LITERAL], p or a cast of these, in 4-byte
  // words; -1 otherwise.
  long long constant_word(const grammar::Param& p, const Expr& address) const {
    const Expr* a = address.kind == ExprKind::Cast ? &address.children[0] : &address;
    const std::string type = element_type(p, address);
    if (type != "int" && type != "unsigned int" && type != "float") return -1;
    if (a->is_name(p.name)) return 0;
    if (a->kind == ExprKind::Unary && a->text == "&" && a->children[0].kind == ExprKind::Index &&
        a->children[0].children[0].is_name(p.name) && a->children[0].children[1].kind == ExprKind::Literal) {
      char* end = nullptr;
      const long long index = std::strtoll(a->children[0].children[1].text.c_str(), &end, 0);
      if (end && *end == '\0' && canonical_type(p.base_type) == "float") return index;
    }
    return -1;
  }

  struct SignHalf {
    std::string operand;       // V of __float_as_int(V) / __float_as_uint(V); "" when no half
    bool non_negative = true;  // int half (V's sign bit clear) or unsigned half (set)
    std::string kind;          // "min" or "max"
  };

  // `atomicMin/Max((int*)A, __float_as_int(V))` in the branch of
  // `if (__float_as_int(V) >= 0)` that has V's sign bit clear, or
  // `atomicMin/Max((unsigned int*)A, __float_as_uint(V))` in its branch that
  // has it set, V a local not assigned inside the if.
  SignHalf sign_half(std::size_t element, const grammar::Param& p, const Expr& call) const {
    SignHalf none;
    const auto op = combinable_atomic(call.callee());
    if (!op || (op->kind != "min" && op->kind != "max")) return none;
    const std::string type = element_type(p, call.children[1]);
    const Expr& value = call.children[2];
    const bool ints = type == "int";
    if (!ints && type != "unsigned int") return none;
    if (value.kind != ExprKind::Call || value.children.size() != 2 ||
        value.callee() != (ints ? "__float_as_int" : "__float_as_uint") || value.children[1].kind != ExprKind::Name)
      return none;
    const std::string v = value.children[1].text;
    const auto branch = enclosing_branch(element);
    if (!branch) return none;
    const auto [header, then_branch] = *branch;
    const Element& h = k_.elements[header];
    const auto condition = parse_expression(k_.tokens, h.condition->first + 1, h.condition->last - 1);
    if (!condition || condition->kind != ExprKind::Binary || condition->children[1].kind != ExprKind::Literal ||
        condition->children[1].text != "0")
      return none;
    const Expr& bits = condition->children[0];
    if (bits.kind != ExprKind::Call || bits.callee() != "__float_as_int" || bits.children.size() != 2 ||
        !bits.children[1].is_name(v))
      return none;
    bool clear_in_then;
    if (condition->text == ">=") clear_in_then = true;
    else if (condition->text == "<") clear_in_then = false;
    else return none;
    const bool clear = then_branch == clear_in_then;
    if (clear != ints) return none;
    // V keeps the value the condition tested.
    for (std::size_t t = k_.elements[header].tokens.last + 1; t < k_.elements[element].tokens.first; ++t)
      if (k_.tokens[t].is(v) && t + 1 < k_.tokens.size()) {
        const std::string& next = k_.tokens[next_code(k_.tokens, t + 1)].text;
        if (next == "=" || next == "+=" || next == "-=" || next == "++" || next == "--") return none;
      }
    return SignHalf{v, ints, op->kind};
  }

  // The if header whose branch holds `element` directly (braced or not), and
  // whether it is the then branch; nullopt otherwise (an else-if chain too).
  std::optional<std::pair<std::size_t, bool>> enclosing_branch(std::size_t element) const {
    auto previous = [&](std::size_t i) {
      while (i-- > 0)
        if (k_.elements[i].kind != ElementKind::Comment) return i;
      return std::string::npos;
    };
    std::size_t h = previous(element);
    if (h == std::string::npos) return std::nullopt;
    if (!(k_.elements[h].kind == ElementKind::IfHeader || k_.elements[h].kind == ElementKind::ElseHeader) ||
        !k_.elements[h].awaits_braceless_body) {
      // Braced: the block's opening brace, then its header.
      const int b = k_.elements[element].block;
      std::size_t open = element;
      while (open-- > 0)
        if (k_.elements[open].kind == ElementKind::BlockOpen && k_.elements[open].block_after == b) break;
      if (open == std::string::npos || open >= element) return std::nullopt;
      h = previous(open);
      if (h == std::string::npos) return std::nullopt;
    }
    if (k_.elements[h].kind == ElementKind::IfHeader) {
      const std::size_t before = previous(h);
      if (before != std::string::npos && k_.elements[before].kind == ElementKind::ElseHeader) return std::nullopt;
      return std::make_pair(h, true);
    }
    if (k_.elements[h].kind != ElementKind::ElseHeader) return std::nullopt;
    // The else's if: the nearest if header before it in the same block.
    std::size_t i = h;
    while (i-- > 0)
      if (k_.elements[i].kind == ElementKind::IfHeader && k_.elements[i].block == k_.elements[h].block) {
        const std::size_t before = previous(i);
        if (before != std::string::npos && k_.elements[before].kind == ElementKind::ElseHeader) return std::nullopt;
        return std::make_pair(i, false);
      }
    return std::nullopt;
  }

  // A `return;` after which the thread would only leave blocks that are no
  // loop or switch on its way to the kernel's end: dropping it changes
  // nothing (`if (i < n) { ... } else { return; }` at the end of a kernel).
  bool trailing(std::size_t r) const {
    const auto [first, last] = statement_range(k_, k_.elements[r]);
    if (first != last) return false;  // returns a value
    // Alone on its line, so dropping its line drops nothing else.
    for (std::size_t t = 0; t < k_.tokens.size(); ++t)
      if ((t < k_.elements[r].tokens.first || t > k_.elements[r].tokens.last) && k_.tokens[t].kind != TokenKind::Comment &&
          k_.tokens[t].line == k_.tokens[first].line)
        return false;
    for (int b = k_.elements[r].block; b >= 0 && b != static_cast<int>(f_.block); b = k_.blocks[static_cast<std::size_t>(b)].parent)
      if (k_.blocks[static_cast<std::size_t>(b)].loop || k_.blocks[static_cast<std::size_t>(b)].breakable) return false;
    for (std::size_t t = k_.elements[r].tokens.last + 1; t < k_.tokens.size(); ++t) {
      const Token& x = k_.tokens[t];
      if (x.kind == TokenKind::Comment || !live_(t)) continue;
      if (!x.is("}")) return false;
      if (t == body_close_token_) return true;
    }
    return false;
  }

  std::optional<std::string> refuse(std::size_t element, const AtomicOperation& op, const Expr& call) const {
    if (!f_.is_kernel) return "not in a __global__ kernel";
    if (no_exit_) return *no_exit_;  // no early exit to make a predicate of, or a name that could clash
    const Expr& address = call.children[1];
    if (rule_ == SiteRule::UniformAddress) {
      if (auto why = address_not_uniform(element, address)) return why;
    } else {
      const grammar::Param* p = pointee(f_, address);
      if (!p || !data_index(address, p->name))
        return "its address is not &p[i], p + i or i + p of a pointer parameter p";
      if (uniformity_.uniform(address, element))
        return "its address is the same for every thread of a block (aggregate reduces it in registers)";
      const Element& e = k_.elements[element];
      const int d = grammar::resolve(k_, p->name, e.block, e.pos);
      if (d >= 0 && uniformity_.assigned(d)) return "the kernel assigns its buffer parameter " + p->name;
    }
    const grammar::Param* p = pointee(f_, address);
    if (!p) return "its address is not a pointer parameter p, &p[i] or p + i";
    const std::string type = element_type(*p, address);
    if (!takes(op, type)) return op.function + " on " + type + " is not combined";
    // Every other use of the buffer: a statement of the same operation on the
    // same element type (they commute).
    for (std::size_t i = 0; i < k_.elements.size(); ++i) {
      const Element& e = k_.elements[i];
      if (e.function != function_ || i == element || !live_(e.tokens.first) || e.kind == ElementKind::FunctionHeader) continue;
      bool uses = false;
      for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
        uses = uses || (k_.tokens[t].is(p->name) && grammar::names_something(k_, t, e.tokens.first));
      if (!uses) continue;
      const auto [first, last] = statement_range(k_, e);
      const std::string line = std::to_string(k_.tokens[first].line);
      const auto other = operation_of(k_.tokens[first].text);
      if (e.kind != ElementKind::Statement || !other)
        return "the kernel also reads or writes " + p->name + " at line " + line;
      const auto other_call = parse_expression(k_.tokens, first, last);
      const bool same = other->function == op.function && other_call && other_call->children.size() == 3 &&
                        element_type(*p, other_call->children[1]) == type;
      if (!same && !(other_call && other_call->children.size() == 3 &&
                     commute(element, *p, call, i, *other_call)))
        return "the kernel also updates " + p->name + " with another operation or element type at line " + line +
               " (mixed atomics need not commute)";
    }
    // The line is rewritten whole: nothing else may stand on it.
    const Element& e = k_.elements[element];
    const int from = k_.tokens[e.tokens.first].line, to = k_.tokens[e.tokens.last].end_line;
    for (std::size_t t = 0; t < k_.tokens.size(); ++t) {
      const Token& x = k_.tokens[t];
      if ((t < e.tokens.first || t > e.tokens.last) && x.kind != TokenKind::Comment && x.line <= to && x.end_line >= from)
        return "another statement or header shares its line";
    }
    return std::nullopt;
  }

  const ParsedKernel& k_;
  const grammar::Function& f_;
  int function_;
  const std::function<bool(std::size_t)>& live_;
  const std::map<std::string, CasHelper>& helpers_;
  SiteRule rule_;
  AggregateSites& out_;
  Uniformity uniformity_;
  std::optional<std::size_t> body_first_, body_close_;
  std::size_t body_close_token_ = 0;
  std::vector<std::size_t> trailing_returns_;
  std::optional<EarlyExit> exit_;
  std::optional<std::string> no_exit_;
};

}  // namespace

std::optional<AtomicOperation> combinable_atomic(const std::string& name) {
  static const std::vector<AtomicOperation> ops = {{"atomicAdd", "add"}, {"atomicMin", "min"}, {"atomicMax", "max"},
                                                   {"atomicAnd", "and"}, {"atomicOr", "or"},   {"atomicXor", "xor"}};
  for (const auto& op : ops)
    if (op.function == name) return op;
  return std::nullopt;
}

std::string identity_literal(const std::string& kind, const std::string& type) {
  // Floats (compare-and-swap helpers): the infinity on the far side.
  if (type == "float" && (kind == "max" || kind == "min"))
    return kind == "max" ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
  if (type == "double" && (kind == "max" || kind == "min"))
    return kind == "max" ? "__longlong_as_double(0xfff0000000000000ll)" : "__longlong_as_double(0x7ff0000000000000ll)";
  const bool is_int = type == "int", is_ull = type == "unsigned long long int";
  if (kind == "min") return is_int ? "0x7fffffff" : is_ull ? "0xffffffffffffffffull" : "0xffffffffu";
  if (kind == "max") return is_int ? "(-0x7fffffff - 1)" : is_ull ? "0ull" : "0u";
  if (kind == "and") return is_int ? "-1" : is_ull ? "0xffffffffffffffffull" : "0xffffffffu";
  return "0";  // add, or, xor
}

namespace {

AggregateSites find_sites(const ParsedKernel& k, const std::function<bool(std::size_t)>& live, SiteRule rule) {
  const std::function<bool(std::size_t)> every = live ? live : [](std::size_t) { return true; };
  AggregateSites out;
  const std::map<std::string, CasHelper> helpers = find_cas_helpers(k);
  for (std::size_t f = 0; f < k.functions.size(); ++f) {
    if (k.functions[f].header_element < 0) continue;
    KernelSites(k, static_cast<int>(f), every, helpers, rule, out).run();
  }
  return out;
}

}  // namespace

AggregateSites find_aggregate_sites(const ParsedKernel& k, const std::function<bool(std::size_t)>& live) {
  return find_sites(k, live, SiteRule::UniformAddress);
}

AggregateSites find_privatise_sites(const ParsedKernel& k, const std::function<bool(std::size_t)>& live) {
  return find_sites(k, live, SiteRule::DataAddress);
}

}  // namespace gi::analysis

#include "analysis/expression.hpp"

#include <set>
#include <stdexcept>

namespace gi::analysis {
namespace {

using grammar::Token;
using grammar::TokenKind;

struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The words a parenthesised cast may be made of: built-in types and their
// qualifiers, CUDA's vector types, and `*` (checked in looks_like_type).
bool type_word(const std::string& w) {
  static const std::set<std::string> words = {
      "const", "volatile", "unsigned", "signed", "int", "float", "double", "char", "short", "long", "bool", "void",
      "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "__half",
      "half", "__nv_bfloat16"};
  if (words.count(w)) return true;
  // float2, int4, uchar4, double2, ...
  static const std::set<std::string> vector_bases = {"char", "uchar", "short", "ushort", "int", "uint", "long",
                                                      "ulong", "longlong", "ulonglong", "float", "double"};
  if (w.size() >= 2 && w.back() >= '1' && w.back() <= '4') return vector_bases.count(w.substr(0, w.size() - 1)) > 0;
  return false;
}

int binary_precedence(const std::string& op) {
  if (op == ",") return 1;
  if (op == "=" || op == "+=" || op == "-=" || op == "*=" || op == "/=" || op == "%=" || op == "<<=" || op == ">>=" ||
      op == "&=" || op == "^=" || op == "|=" || op == "?")
    return 2;
  if (op == "||") return 3;
  if (op == "&&") return 4;
  if (op == "|") return 5;
  if (op == "^") return 6;
  if (op == "&") return 7;
  if (op == "==" || op == "!=") return 8;
  if (op == "<" || op == "<=" || op == ">" || op == ">=") return 9;
  if (op == "<<" || op == ">>") return 10;
  if (op == "+" || op == "-") return 11;
  if (op == "*" || op == "/" || op == "%") return 12;
  return 0;
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::size_t first, std::size_t last) : t_(tokens) {
    for (std::size_t i = first; i <= last && i < tokens.size(); ++i)
      if (tokens[i].kind != TokenKind::Comment) code_.push_back(i);
  }

  Expr parse() {
    if (code_.empty()) throw Refusal("an empty expression");
    Expr e = expression(1);
    if (at_ < code_.size()) throw Refusal("unexpected '" + t_[code_[at_]].text + "' after an expression");
    return e;
  }

 private:
  bool done() const { return at_ >= code_.size(); }
  const Token& peek(std::size_t ahead = 0) const {
    if (at_ + ahead >= code_.size()) throw Refusal("the expression ends too early");
    return t_[code_[at_ + ahead]];
  }
  bool peek_is(const char* text, std::size_t ahead = 0) const {
    return at_ + ahead < code_.size() && t_[code_[at_ + ahead]].kind == TokenKind::Punct &&
           t_[code_[at_ + ahead]].text == text;
  }
  std::size_t index() const { return code_[at_]; }
  std::size_t previous() const { return code_[at_ - 1]; }
  void expect(const char* text) {
    if (!peek_is(text)) throw Refusal(std::string("expected '") + text + "', got '" + peek().text + "'");
    ++at_;
  }

  Expr node(ExprKind kind, std::string text, std::size_t first, std::vector<Expr> children = {}) {
    Expr e;
    e.kind = kind;
    e.text = std::move(text);
    e.first = first;
    e.last = previous();
    e.children = std::move(children);
    return e;
  }

  // Precedence climbing; assignment and ?: associate to the right.
  Expr expression(int min_precedence) {
    Expr left = unary();
    while (!done() && peek().kind == TokenKind::Punct) {
      const std::string op = peek().text;
      const int p = binary_precedence(op);
      if (p == 0 || p < min_precedence) break;
      const std::size_t first = left.first;
      ++at_;
      if (op == "?") {
        Expr then = expression(1);
        expect(":");
        Expr otherwise = expression(2);
        left = node(ExprKind::Ternary, "?:", first, {std::move(left), std::move(then), std::move(otherwise)});
        continue;
      }
      Expr right = expression(p == 2 ? p : p + 1);
      left = node(ExprKind::Binary, op, first, {std::move(left), std::move(right)});
    }
    return left;
  }

  // `( type ) operand`: a cast when the parenthesis holds type words only.
  bool looks_like_cast() const {
    if (!peek_is("(")) return false;
    std::size_t k = 1;
    bool words = false;
    while (at_ + k < code_.size()) {
      const Token& x = t_[code_[at_ + k]];
      if (x.kind == TokenKind::Punct && x.text == ")") return words;
      if (x.kind == TokenKind::Identifier && type_word(x.text)) words = true;
      else if (!(x.kind == TokenKind::Punct && x.text == "*")) return false;
      ++k;
    }
    return false;
  }

  Expr unary() {
    const std::size_t first = index();
    const Token& x = peek();
    if (x.kind == TokenKind::Punct &&
        (x.text == "-" || x.text == "+" || x.text == "!" || x.text == "~" || x.text == "*" || x.text == "&" ||
         x.text == "++" || x.text == "--")) {
      ++at_;
      Expr operand = unary();
      return node(ExprKind::Unary, x.text, first, {std::move(operand)});
    }
    if (looks_like_cast()) {
      ++at_;
      std::string type;
      while (!peek_is(")")) type += (type.empty() ? "" : " ") + t_[code_[at_++]].text;
      ++at_;
      Expr operand = unary();
      return node(ExprKind::Cast, type, first, {std::move(operand)});
    }
    return postfix(primary());
  }

  Expr primary() {
    const std::size_t first = index();
    const Token& x = peek();
    if (x.kind == TokenKind::Number || x.kind == TokenKind::String || x.kind == TokenKind::Char) {
      ++at_;
      return node(ExprKind::Literal, x.text, first);
    }
    if (x.kind == TokenKind::Identifier) {
      // static_cast<T>(e) and its kin.
      if (x.text == "static_cast" || x.text == "reinterpret_cast" || x.text == "const_cast") {
        ++at_;
        expect("<");
        std::string type;
        while (!peek_is(">")) type += (type.empty() ? "" : " ") + t_[code_[at_++]].text;
        ++at_;
        expect("(");
        Expr operand = expression(1);
        expect(")");
        return node(ExprKind::Cast, type, first, {std::move(operand)});
      }
      // `int(v / s)`: a functional cast, as `(int)(v / s)` (one type word).
      static const std::set<std::string> one_word_types = {"int", "unsigned", "float", "double", "char",
                                                           "short", "long", "bool"};
      if (one_word_types.count(x.text) && peek_is("(", 1)) {
        at_ += 2;
        Expr operand = expression(1);
        expect(")");
        return node(ExprKind::Cast, x.text, first, {std::move(operand)});
      }
      if (grammar::is_cpp_keyword(x.text) && x.text != "true" && x.text != "false" && x.text != "nullptr" &&
          x.text != "this")
        throw Refusal("'" + x.text + "' inside an expression");
      std::string name = x.text;
      ++at_;
      while (peek_is("::") && at_ + 1 < code_.size() && t_[code_[at_ + 1]].kind == TokenKind::Identifier) {
        name += "::" + t_[code_[at_ + 1]].text;
        at_ += 2;
      }
      if (peek_is("<")) {
        const bool one_argument = at_ + 2 < code_.size() && t_[code_[at_ + 2]].text == ">" && peek_is("(", 3);
        // CUDA's texture fetches are templates only (tex1Dfetch<float4>(t,
        // i)): the name with its argument is the callee.
        if (one_argument && (name.rfind("tex1D", 0) == 0 || name.rfind("tex2D", 0) == 0 || name.rfind("tex3D", 0) == 0)) {
          name += "<" + t_[code_[at_ + 1]].text + ">";
          at_ += 3;
          return node(ExprKind::Name, name, first);
        }
        // A keyword argument (Floor<int>(x), IndexToDims<true>(i, d)) makes
        // a template's instance: no comparison has a keyword for an operand.
        const Token& argument = t_[code_[at_ + 1]];
        if (one_argument && argument.kind == TokenKind::Identifier && grammar::is_cpp_keyword(argument.text) &&
            argument.text != "this") {
          name += "<" + argument.text + ">";
          at_ += 3;
          return node(ExprKind::Name, name, first);
        }
        // Any other template argument list (min<T>(a, b)) is not told
        // apart from a comparison here; refuse rather than guess.
        if (one_argument) throw Refusal("a template argument list after '" + name + "'");
      }
      return node(ExprKind::Name, name, first);
    }
    if (x.kind == TokenKind::Punct && x.text == "(") {
      ++at_;
      Expr inner = expression(1);
      expect(")");
      inner.first = first;
      inner.last = previous();
      return inner;
    }
    throw Refusal("unexpected '" + x.text + "'");
  }

  Expr postfix(Expr e) {
    while (!done()) {
      const std::size_t first = e.first;
      if (peek_is("(")) {
        ++at_;
        std::vector<Expr> children{std::move(e)};
        if (!peek_is(")")) {
          while (true) {
            children.push_back(expression(2));  // a comma here separates arguments
            if (peek_is(")")) break;
            expect(",");
          }
        }
        expect(")");
        // __mul24(a, b) and __umul24(a, b), which older kernels write for
        // index arithmetic, are a * b for every operand below 2^24: the
        // analyses see the product (the tokens still spell the call).
        if (children.size() == 3 && (children[0].is_name("__umul24") || children[0].is_name("__mul24"))) {
          children.erase(children.begin());
          e = node(ExprKind::Binary, "*", first, std::move(children));
          continue;
        }
        e = node(ExprKind::Call, "", first, std::move(children));
      } else if (peek_is("[")) {
        ++at_;
        Expr i = expression(1);
        expect("]");
        e = node(ExprKind::Index, "", first, {std::move(e), std::move(i)});
      } else if (peek_is(".") || peek_is("->")) {
        const std::string op = peek().text;
        ++at_;
        if (done() || peek().kind != TokenKind::Identifier) throw Refusal("expected a member name after '" + op + "'");
        const std::string field = peek().text;
        ++at_;
        e = node(ExprKind::Member, op, first, {std::move(e)});
        e.field = field;
      } else if (peek_is("++") || peek_is("--")) {
        const std::string op = "post" + peek().text;
        ++at_;
        e = node(ExprKind::Unary, op, first, {std::move(e)});
      } else {
        break;
      }
    }
    return e;
  }

  const std::vector<Token>& t_;
  std::vector<std::size_t> code_;  // indices of the tokens that are not comments
  std::size_t at_ = 0;
};

void collect_names(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == ExprKind::Name) out.push_back(e.text);
  for (const Expr& c : e.children) collect_names(c, out);
}

}  // namespace

std::string Expr::callee() const {
  if (kind != ExprKind::Call || children.empty() || children[0].kind != ExprKind::Name) return "";
  return children[0].text;
}

std::optional<Expr> parse_expression(const std::vector<Token>& tokens, std::size_t first, std::size_t last,
                                     std::string* why) {
  try {
    return Parser(tokens, first, last).parse();
  } catch (const Refusal& r) {
    if (why) *why = r.what();
    return std::nullopt;
  }
}

std::string expression_text(const std::vector<Token>& tokens, const Expr& e) {
  std::string out;
  const Token* before = nullptr;
  bool after_unary = false;  // `&x`, `-y`, `!z`: no space after a prefix operator
  for (std::size_t i = e.first; i <= e.last && i < tokens.size(); ++i) {
    const Token& x = tokens[i];
    if (x.kind == TokenKind::Comment) continue;
    const bool tight_before = x.is(".") || x.is("->") || x.is("::") || x.is(")") || x.is("]") || x.is(",") ||
                              x.is("(") || x.is("[");
    const bool after_unary_before = after_unary;
    const bool tight_after = after_unary || (before && (before->is(".") || before->is("->") || before->is("::") ||
                                                        before->is("(") || before->is("[")));
    // A prefix operator stands where an operand is expected: at the start or after another operator.
    after_unary = (x.is("&") || x.is("*") || x.is("-") || x.is("+") || x.is("!") || x.is("~")) &&
                  (!before || (before->kind == TokenKind::Punct && !before->is(")") && !before->is("]")));
    if (before && !tight_before && !tight_after) out += ' ';
    if (before && x.is("(") && before->kind != TokenKind::Identifier && !before->is(")") && !before->is("]") &&
        !before->is("(") && !before->is("[") && !after_unary_before)
      out += ' ';  // `a * (b)` keeps its space; `f(b)`, `((b))` and `-(b)` have none
    out += x.text;
    before = &x;
  }
  return out;
}

std::optional<long long> whole_literal(const Expr& e) {
  if (e.kind != ExprKind::Literal) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(e.text, &used, 0);
    if (e.text.substr(used).find_first_not_of("uUlL") == std::string::npos) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::vector<std::string> names_in(const Expr& e) {
  std::vector<std::string> out;
  collect_names(e, out);
  return out;
}

std::string canonical_text(const Expr& e) {
  const auto inner = [](const Expr& c) {
    const bool bracket = c.kind == ExprKind::Binary || c.kind == ExprKind::Ternary;
    return bracket ? "(" + canonical_text(c) + ")" : canonical_text(c);
  };
  switch (e.kind) {
    case ExprKind::Name:
    case ExprKind::Literal:
      return e.text;
    case ExprKind::Member:
      return e.children.empty() ? e.field : inner(e.children[0]) + e.text + e.field;
    case ExprKind::Call: {
      std::string out = e.children.empty() ? "" : inner(e.children[0]) + "(";
      for (std::size_t i = 1; i < e.children.size(); ++i) out += (i > 1 ? ", " : "") + canonical_text(e.children[i]);
      return out + ")";
    }
    case ExprKind::Index:
      return e.children.size() == 2 ? inner(e.children[0]) + "[" + canonical_text(e.children[1]) + "]" : e.text;
    case ExprKind::Unary:
      if (e.children.size() != 1) return e.text;
      return e.text.rfind("post", 0) == 0 ? inner(e.children[0]) + e.text.substr(4) : e.text + inner(e.children[0]);
    case ExprKind::Binary:
      return e.children.size() == 2 ? inner(e.children[0]) + " " + e.text + " " + inner(e.children[1]) : e.text;
    case ExprKind::Ternary:
      return e.children.size() == 3
                 ? inner(e.children[0]) + " ? " + inner(e.children[1]) + " : " + inner(e.children[2])
                 : e.text;
    case ExprKind::Cast:
      return e.children.size() == 1 ? "(" + e.text + ")" + inner(e.children[0]) : e.text;
  }
  return e.text;
}

bool is_assignment(const Expr& e) {
  if (e.kind == ExprKind::Unary)
    return e.text == "++" || e.text == "--" || e.text == "post++" || e.text == "post--";
  if (e.kind != ExprKind::Binary) return false;
  return binary_precedence(e.text) == 2 && e.text != "?";
}

const Expr& without_outer_casts(const Expr& e) {
  return e.kind == ExprKind::Cast && e.children.size() == 1 ? without_outer_casts(e.children[0]) : e;
}

}  // namespace gi::analysis

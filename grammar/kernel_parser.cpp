// Recursive-descent structure parser over the X3 token stream. It does not
// type-check C++: it finds statements, headers, blocks and declarations,
// which is all the grammar needs to keep edits balanced and scope-safe.
#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "grammar/kernel_structure.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {
namespace {

const std::unordered_set<std::string> kBuiltinTypes = {
    "void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "size_t", "auto", "dim3", "half", "__half", "uint", "ushort", "ulong",
    "char1", "char2", "char3", "char4", "uchar1", "uchar2", "uchar3", "uchar4",
    "short1", "short2", "short3", "short4", "ushort1", "ushort2", "ushort3", "ushort4",
    "int1", "int2", "int3", "int4", "uint1", "uint2", "uint3", "uint4",
    "long1", "long2", "long3", "long4", "ulong1", "ulong2", "ulong3", "ulong4",
    "longlong1", "longlong2", "ulonglong1", "ulonglong2",
    "float1", "float2", "float3", "float4", "double1", "double2", "double3", "double4",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"};

const std::unordered_set<std::string> kQualifiers = {
    "const", "volatile", "static", "register", "extern", "inline", "constexpr",
    "__shared__", "__constant__", "__device__", "__managed__", "__restrict__"};

const std::unordered_set<std::string> kFloatTypes = {"float", "double"};
const std::unordered_set<std::string> kIntegerWords = {"int", "unsigned", "signed", "long", "short"};

const std::unordered_set<std::string> kAssignOps = {"=", "+=", "-=", "*=", "/=", "%=",
                                                    "&=", "|=", "^=", "<<=", ">>=", "++", "--"};

class Parser {
 public:
  Parser(std::string_view source, const std::string& file, const std::unordered_set<std::string>& known_types = {})
      : file_(file), user_types_(known_types) {
    k_.tokens = tokenize(source, file);
    k_.blocks.push_back(Block{});  // file scope
  }

  // The type names a header makes, read without parsing it as a kernel file
  // (headers hold what gi's parser never needs to: host classes, prototypes):
  // `#define fp float`, `typedef ... NAME;`, `using NAME = ...;`, and
  // `struct`/`class`/`union`/`enum NAME` at file scope.
  std::unordered_set<std::string> header_type_names() {
    int depth = 0;  // braces: only file-scope typedefs count
    for (std::size_t t = 0; t < k_.tokens.size(); ++t) {
      const Token& x = tok(t);
      if (x.kind == TokenKind::Preprocessor) declare_macro(x.text, 0);
      if (x.is("{")) ++depth;
      if (x.is("}") && depth > 0) --depth;
      const std::size_t next = next_code(t + 1);
      const bool named = next < k_.tokens.size() && tok(next).kind == TokenKind::Identifier;
      if ((x.is("struct") || x.is("class") || x.is("union") || x.is("enum")) && named) user_types_.insert(tok(next).text);
      if (x.is("using") && named && is(next_code(next + 1), "=")) {
        user_types_.insert(tok(next).text);
        std::size_t semi = next_code(next + 1);
        while (semi < k_.tokens.size() && !tok(semi).is(";")) semi = next_code(semi + 1);
        note_alias(tok(next).text, next_code(next_code(next + 1) + 1), semi);
      }
      if (!x.is("typedef") || depth > 0) continue;
      // The names before the ';' and before each ',' after the last '}' (`typedef struct {...} A, *PA;`).
      int inner = 0;
      std::size_t u = t + 1, last_close = t;
      for (; u < k_.tokens.size() && !(inner == 0 && tok(u).is(";")); ++u) {
        if (tok(u).is("{") || tok(u).is("(") || tok(u).is("[")) ++inner;
        if (tok(u).is("}") || tok(u).is(")") || tok(u).is("]")) --inner;
        if (tok(u).is("}") && inner == 0) last_close = u;
      }
      for (std::size_t v = std::max(last_close, t) + 1; v <= u && v < k_.tokens.size(); ++v) {
        if (!(tok(v).is(";") || tok(v).is(","))) continue;
        const std::size_t before = prev_code(v);
        if (before != std::string::npos && tok(before).kind == TokenKind::Identifier) user_types_.insert(tok(before).text);
        // `typedef unsigned int index_t;`: one name for built-in type words.
        if (before != std::string::npos && tok(v).is(";") && last_close == t) note_alias(tok(before).text, t + 1, before);
      }
    }
    return user_types_;
  }

  // The aliases header_type_names met (`#define fp float`, `typedef double
  // real;`, `using index_t = int;`): each name whose definition is built-in
  // type words only, by that spelling.
  const std::map<std::string, std::string>& type_aliases() const { return aliases_; }

  ParsedKernel run() {
    if (k_.tokens.empty()) throw SourceError(file_, 1, 0, "empty source: expected at least one function");
    parse_file();
    bool any_function = !k_.functions.empty();
    if (!any_function) throw SourceError(file_, 1, 0, "no function definition found: expected a __global__ kernel");
    return finish();
  }

  // A header: any file-level items, no function needed.
  ParsedKernel run_header() {
    parse_file();
    return finish();
  }

 private:
  ParsedKernel finish() {
    mark_written_params();
    k_.block_declarations.assign(k_.blocks.size(), {});
    for (int d = 0; d < static_cast<int>(k_.declarations.size()); ++d)
      k_.block_declarations[k_.declarations[d].block].push_back(d);
    return std::move(k_);
  }

  // ---------------------------------------------------------------- helpers
  const Token& tok(std::size_t i) const { return k_.tokens[i]; }
  bool at_end() const { return i_ >= k_.tokens.size(); }
  bool is(std::size_t i, std::string_view s) const { return i < k_.tokens.size() && tok(i).is(s); }

  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    if (at >= k_.tokens.size()) {
      const Token& last = k_.tokens.back();
      throw SourceError(file_, last.end_line, 0, message);
    }
    throw SourceError(file_, tok(at).line, tok(at).column, message);
  }

  std::size_t next_code(std::size_t i) const {  // skips comments
    while (i < k_.tokens.size() && tok(i).kind == TokenKind::Comment) ++i;
    return i;
  }

  std::size_t prev_code(std::size_t i) const {  // index of the previous non-comment token, or npos
    while (i > 0) {
      --i;
      if (tok(i).kind != TokenKind::Comment) return i;
    }
    return std::string::npos;
  }

  int add(ElementKind kind, std::size_t first, std::size_t last, int block) {
    Element e;
    e.kind = kind;
    e.tokens = {first, last};
    e.block = block;
    e.pos = next_pos_++;
    e.function = k_.blocks[block].function;
    e.block_after = block;
    k_.elements.push_back(std::move(e));
    return static_cast<int>(k_.elements.size()) - 1;
  }

  int new_block(int parent, bool loop, bool breakable) {
    Block b;
    b.parent = parent;
    b.function = k_.blocks[parent].function;
    b.loop = loop;
    b.breakable = breakable || loop;
    k_.blocks.push_back(b);
    return static_cast<int>(k_.blocks.size()) - 1;
  }

  void declare(const std::string& name, int block, int pos) {
    k_.declarations.push_back(Declaration{name, block, pos});
  }

  static std::string closer(const std::string& open) { return open == "(" ? ")" : open == "[" ? "]" : "}"; }

  [[noreturn]] void fail_unclosed(std::size_t open, const Token& at) const {
    fail(open, "'" + tok(open).text + "' opened here is never closed: expected '" + closer(tok(open).text) +
                   "' before '" + at.text + "' at line " + std::to_string(at.line));
  }

  // Index of the bracket closing the one at `open`; brackets must nest
  // properly, so `(a[0] {` is reported at the '(' that is never closed.
  std::size_t match(std::size_t open) const {
    std::vector<std::size_t> stack;
    for (std::size_t j = open; j < k_.tokens.size(); ++j) {
      const Token& t = tok(j);
      if (t.kind != TokenKind::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        stack.push_back(j);
      } else if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (t.text != closer(tok(stack.back()).text)) fail_unclosed(stack.back(), t);
        stack.pop_back();
        if (stack.empty()) return j;
      }
    }
    fail(open, "'" + tok(open).text + "' opened here is never closed");
  }

  // The `;` that ends the statement starting at `start`, with brackets
  // nested as match() requires: when only their count was checked here,
  // `out[i } ... ;` was one statement, and a patch that copied it next to a
  // use of a pointer parameter gave a kernel that no longer parsed (found by
  // fuzz/fuzz_grammar).
  std::size_t scan_to_semicolon(std::size_t start) const {
    std::vector<std::size_t> open;
    for (std::size_t j = start; j < k_.tokens.size(); ++j) {
      const Token& t = tok(j);
      if (t.kind != TokenKind::Punct) continue;
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        open.push_back(j);
      } else if (t.text == ")" || t.text == "]" || t.text == "}") {
        if (open.empty()) fail(j, "expected ';' before '" + t.text + "' (statement starts at line " +
                                      std::to_string(tok(start).line) + ")");
        if (t.text != closer(tok(open.back()).text)) fail_unclosed(open.back(), t);
        open.pop_back();
      } else if (t.text == ";" && open.empty()) {
        return j;
      }
    }
    fail(start, "statement never ends: expected ';' before end of file");
  }

  void emit_comments(int block) {
    while (!at_end() && tok(i_).kind == TokenKind::Comment) {
      add(ElementKind::Comment, i_, i_, block);
      ++i_;
    }
  }

  // ------------------------------------------------------- declarations
  bool is_type_word(const std::string& w) const {
    return kBuiltinTypes.count(w) > 0 || user_types_.count(w) > 0;
  }

  struct DeclInfo {
    std::vector<std::string> names;
    std::optional<TokenRange> scalar_type;
  };

  // Declaration of variables in [first, last] (last excludes the ';')?
  std::optional<DeclInfo> declaration(std::size_t first, std::size_t last) const {
    std::size_t j = next_code(first);
    bool storage = false;  // __shared__/static/extern: not a plain local scalar
    while (j <= last && tok(j).kind == TokenKind::Identifier && kQualifiers.count(tok(j).text) &&
           !kIntegerWords.count(tok(j).text)) {
      if (tok(j).text != "const" && tok(j).text != "volatile" && tok(j).text != "constexpr") storage = true;
      j = next_code(j + 1);
    }
    if (j > last || tok(j).kind != TokenKind::Identifier) return std::nullopt;
    const std::size_t type_first = j;
    if (tok(j).text == "struct" || tok(j).text == "enum") {
      j = next_code(j + 1);
      if (j > last || tok(j).kind != TokenKind::Identifier) return std::nullopt;
      j = next_code(j + 1);
    } else if (kIntegerWords.count(tok(j).text) || is_type_word(tok(j).text)) {
      // one or more type words: `unsigned long long`, `float4`, `unsigned char`
      while (j <= last && tok(j).kind == TokenKind::Identifier &&
             (kIntegerWords.count(tok(j).text) || (j == type_first && is_type_word(tok(j).text)) ||
              (j != type_first && tok(j).is("char") && kIntegerWords.count(tok(prev_code(j)).text))))
        j = next_code(j + 1);
      if (j == type_first) j = next_code(j + 1);
    } else {
      return std::nullopt;
    }
    std::size_t type_last = prev_code(j);
    std::string type_text;
    for (std::size_t t = type_first; t <= type_last; ++t)
      if (tok(t).kind != TokenKind::Comment) type_text += (type_text.empty() ? "" : " ") + tok(t).text;
    // What follows the type must be a declarator: [*&const]* name then = ; , [ ( {
    std::size_t d = j;
    bool indirect = false;
    while (d <= last && (tok(d).is("*") || tok(d).is("&") || tok(d).is("const") || tok(d).is("__restrict__"))) {
      if (tok(d).is("*") || tok(d).is("&")) indirect = true;
      d = next_code(d + 1);
    }
    if (d > last || tok(d).kind != TokenKind::Identifier || is_cpp_keyword(tok(d).text)) return std::nullopt;
    const std::size_t after = next_code(d + 1);
    if (after <= last + 1 && after < k_.tokens.size()) {
      const Token& a = tok(after);
      if (!(a.is("=") || a.is(";") || a.is(",") || a.is("[") || a.is("(") || a.is("{")))
        return std::nullopt;
    }
    DeclInfo info;
    // Split declarators at top-level commas; each one's first identifier is the name.
    int depth = 0;
    bool want_name = true;
    bool single = true;
    bool array = false;
    for (std::size_t t = j; t <= last; ++t) {
      const Token& x = tok(t);
      if (x.kind == TokenKind::Comment) continue;
      if (x.kind == TokenKind::Punct) {
        if (x.text == "(" || x.text == "[" || x.text == "{") {
          if (depth == 0 && x.text == "[" ) array = true;
          ++depth;
        } else if (x.text == ")" || x.text == "]" || x.text == "}") {
          --depth;
        } else if (x.text == "," && depth == 0) {
          want_name = true;
          single = false;
        } else if (x.text == "=" && depth == 0) {
          want_name = false;
        }
        continue;
      }
      if (want_name && depth == 0 && x.kind == TokenKind::Identifier && !is_cpp_keyword(x.text)) {
        info.names.push_back(x.text);
        want_name = false;
      }
    }
    if (single && !indirect && !array && !storage && (kFloatTypes.count(type_text) || integer_type(type_text)))
      info.scalar_type = TokenRange{type_first, type_last};
    return info;
  }

  static bool integer_type(const std::string& type_text) {
    // Every word an integer word: int, unsigned int, long long, short ...
    std::size_t s = 0;
    if (type_text.empty()) return false;
    while (s <= type_text.size()) {
      std::size_t e = type_text.find(' ', s);
      if (e == std::string::npos) e = type_text.size();
      if (!kIntegerWords.count(type_text.substr(s, e - s))) return false;
      s = e + 1;
    }
    return true;
  }

  // ---------------------------------------------------------- statements
  void parse_block_items(int block, std::size_t open) {
    for (;;) {
      emit_comments(block);
      if (at_end()) fail(open, "'{' opened here is never closed: expected '}'");
      if (tok(i_).is("}")) return;
      const std::string directive = conditional_directive(i_);
      if (directive == "if") {
        parse_conditional(block);
        continue;
      }
      if (!directive.empty()) fail(i_, "#" + directive + " without a matching #if in this block");
      parse_statement(block, false);
    }
  }

  // "if" (#if, #ifdef, #ifndef), "elif", "else", "endif", or "" for any other token.
  std::string conditional_directive(std::size_t at) const {
    if (at >= k_.tokens.size() || tok(at).kind != TokenKind::Preprocessor) return "";
    const std::string& text = tok(at).text;
    std::size_t p = text.find_first_not_of(" \t", 1);
    if (p == std::string::npos) return "";
    std::size_t e = p;
    while (e < text.size() && std::isalpha(static_cast<unsigned char>(text[e]))) ++e;
    const std::string word = text.substr(p, e - p);
    if (word == "if" || word == "ifdef" || word == "ifndef") return "if";
    if (word == "elif" || word == "else" || word == "endif") return word;
    return "";
  }

  // An #if ... #endif inside a function: each branch is a block of its own
  // and must close every brace it opens, so the kernel parses whichever path
  // a switch picks and every path's lines are editable.
  void parse_conditional(int block) {
    const std::size_t opened = i_;
    auto directive_line = [&](int branch_after) {
      const int e = add(ElementKind::Preprocessor, i_, i_, block);
      k_.elements[e].conditional = true;
      k_.elements[e].block_after = branch_after;
      ++i_;
    };
    auto new_branch = [&] {
      const int b = new_block(block, false, false);
      k_.blocks[b].branch = true;
      return b;
    };
    int branch = new_branch();
    directive_line(branch);
    for (;;) {
      emit_comments(branch);
      if (at_end()) fail(opened, "#if opened here is never closed: expected #endif");
      if (tok(i_).is("}"))
        fail(i_, "'}' closes a block opened before the #if at line " + std::to_string(tok(opened).line) +
                     ": each path of an #if must close the braces it opens");
      const std::string directive = conditional_directive(i_);
      if (directive == "elif" || directive == "else") {
        branch = new_branch();
        directive_line(branch);
      } else if (directive == "endif") {
        directive_line(block);
        return;
      } else if (directive == "if") {
        parse_conditional(branch);
      } else {
        parse_statement(branch, false);
      }
    }
  }

  // Parses one statement (or a braced block) at i_, standing in `block`.
  void parse_statement(int block, bool braceless) {
    // Every nested statement is a stack frame of this parser: thousands of
    // '{' overflowed the stack (an input for fuzz/fuzz_grammar). No kernel nests
    // anywhere near this deep; an else-if chain counts one level per branch.
    if (depth_ >= kMaxNesting)
      fail(i_, "statements nest deeper than " + std::to_string(kMaxNesting) + " levels");
    ++depth_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    emit_comments(block);
    while (!at_end() && tok(i_).kind == TokenKind::Preprocessor && conditional_directive(i_).empty()) {
      add(is_pragma_unroll(tok(i_).text) ? ElementKind::Pragma : ElementKind::Preprocessor, i_, i_, block);
      ++i_;
      emit_comments(block);
    }
    if (!conditional_directive(i_).empty()) {
      // The block's item loop parses the conditional.
      if (braceless) fail(i_, "a header's body without braces cannot start with #" + conditional_directive(i_) +
                                  ": put the body in braces");
      return;
    }
    if (at_end() || tok(i_).is("}")) {
      if (braceless) fail(i_, "expected a statement after this header");
      return;
    }
    const Token& t = tok(i_);
    const std::size_t start = i_;
    if (t.is("{")) {
      const int child = new_block(block, false, false);
      add(ElementKind::BlockOpen, start, start, block);
      k_.elements.back().block_after = child;
      ++i_;
      parse_block_items(child, start);
      add(ElementKind::BlockClose, i_, i_, child);
      k_.elements.back().block_after = block;
      ++i_;
      return;
    }
    if (t.is("if")) {
      std::size_t lp = next_code(i_ + 1);
      if (is(lp, "constexpr")) lp = next_code(lp + 1);  // C++17 `if constexpr (...)`
      if (!is(lp, "(")) fail(i_, "expected '(' after 'if'");
      const std::size_t rp = match(lp);
      const int h = add(ElementKind::IfHeader, start, rp, block);
      k_.elements[h].condition = TokenRange{lp, rp};
      k_.elements[h].awaits_braceless_body = !is(next_code(rp + 1), "{");
      i_ = rp + 1;
      parse_body(block, block);
      const std::size_t e = next_code(i_);
      if (is(e, "else")) {
        k_.elements.back().followed_by_continuation = true;
        emit_comments(block);
        const int el = add(ElementKind::ElseHeader, e, e, block);
        k_.elements[el].awaits_braceless_body = !is(next_code(e + 1), "{") && !is(next_code(e + 1), "if");
        i_ = e + 1;
        parse_body(block, block);
      }
      return;
    }
    if (t.is("for") || t.is("while") || t.is("switch")) {
      const std::size_t lp = next_code(i_ + 1);
      if (!is(lp, "(")) fail(i_, "expected '(' after '" + t.text + "'");
      const std::size_t rp = match(lp);
      const bool is_switch = t.is("switch");
      const int inner = new_block(block, !is_switch, is_switch);
      const int h = add(is_switch ? ElementKind::SwitchHeader : ElementKind::LoopHeader, start, rp, block);
      k_.elements[h].is_for = t.is("for");
      k_.elements[h].awaits_braceless_body = !is(next_code(rp + 1), "{");
      if (t.is("for")) {
        // The init-statement's declarations are visible in the loop only.
        std::size_t semi = lp + 1;
        int depth = 0;
        for (; semi < rp; ++semi) {
          if (tok(semi).is("(") || tok(semi).is("[")) ++depth;
          if (tok(semi).is(")") || tok(semi).is("]")) --depth;
          if (tok(semi).is(";") && depth == 0) break;
        }
        if (semi >= rp) fail(lp, "expected ';' inside 'for (...)'");
        if (semi > lp + 1)
          if (auto d = declaration(lp + 1, semi - 1))
            for (const auto& n : d->names) declare(n, inner, k_.elements[h].pos);
      }
      i_ = rp + 1;
      parse_body(inner, block);
      return;
    }
    if (t.is("do")) {
      const int inner = new_block(block, true, true);
      const int h = add(ElementKind::LoopHeader, start, start, block);
      k_.elements[h].awaits_braceless_body = !is(next_code(i_ + 1), "{");
      ++i_;
      parse_body(inner, block);
      k_.elements.back().followed_by_continuation = true;
      emit_comments(block);
      if (!is(i_, "while")) fail(i_, "expected 'while' after the body of 'do'");
      const std::size_t semi = scan_to_semicolon(i_);
      add(ElementKind::LoopHeader, i_, semi, block);
      i_ = semi + 1;
      return;
    }
    if (t.is("case") || t.is("default")) {
      std::size_t j = i_;
      while (j < k_.tokens.size() && !tok(j).is(":")) ++j;
      if (j >= k_.tokens.size()) fail(i_, "expected ':' after '" + t.text + "'");
      add(ElementKind::CaseLabel, start, j, block);
      i_ = j + 1;
      return;
    }
    // A goto target `NAME:` is a line of its own, as a case label is: the
    // statement after it may stand beyond an #else or #endif (Rodinia's
    // mummergpu), and a label is never deleted or copied.
    if (t.kind == TokenKind::Identifier && !is_cpp_keyword(t.text) && is(next_code(i_ + 1), ":")) {
      const std::size_t colon = next_code(i_ + 1);
      add(ElementKind::CaseLabel, start, colon, block);
      i_ = colon + 1;
      return;
    }
    if (t.is("else")) fail(i_, "'else' without a matching 'if'");
    const std::size_t semi = scan_to_semicolon(i_);
    if (semi > i_) {
      if (auto d = declaration(i_, semi - 1)) {
        const int e = add(ElementKind::Declaration, start, semi, block);
        k_.elements[e].declares = d->names;
        k_.elements[e].scalar_type = d->scalar_type;
        for (const auto& n : d->names) declare(n, block, k_.elements[e].pos);
        i_ = semi + 1;
        return;
      }
      if (tok(i_).is("typedef") || tok(i_).is("struct") || tok(i_).is("using")) {
        add(ElementKind::Declaration, start, semi, block);
        i_ = semi + 1;
        return;
      }
    }
    const int e = add(ElementKind::Statement, start, semi, block);
    k_.elements[e].braceless_body = braceless;
    i_ = semi + 1;
  }

  // The body of a control header; afterwards the scope is `outer` again.
  void parse_body(int inner, int outer) {
    parse_statement(inner, true);
    k_.elements.back().block_after = outer;
  }

  static bool is_pragma_unroll(const std::string& text) {
    std::size_t p = text.find_first_not_of(" \t", 1);
    if (p == std::string::npos || text.compare(p, 6, "pragma") != 0) return false;
    p = text.find_first_not_of(" \t", p + 6);
    return p != std::string::npos && text.compare(p, 6, "unroll") == 0;
  }

  // -------------------------------------------------------------- file
  void parse_file() {
    int extern_depth = 0;
    while (!at_end()) {
      emit_comments(0);
      if (at_end()) break;
      const Token& t = tok(i_);
      if (t.kind == TokenKind::Preprocessor) {
        const int e = add(ElementKind::Preprocessor, i_, i_, 0);
        declare_macro(t.text, k_.elements[e].pos);
        ++i_;
        continue;
      }
      if ((t.is("extern") && i_ + 2 < k_.tokens.size() && tok(i_ + 1).kind == TokenKind::String &&
           tok(i_ + 2).is("{")) ||
          namespace_brace(i_) != std::string::npos) {
        const std::size_t brace = t.is("extern") ? i_ + 2 : namespace_brace(i_);
        add(ElementKind::TopLevel, i_, brace, 0);
        i_ = brace + 1;
        ++extern_depth;
        continue;
      }
      if (t.is("}")) {
        if (extern_depth == 0) fail(i_, "unmatched '}': no block is open here");
        add(ElementKind::TopLevel, i_, i_, 0);
        --extern_depth;
        ++i_;
        continue;
      }
      parse_top_item();
    }
    if (extern_depth > 0) fail(k_.tokens.size(), "'extern \"C\" {' is never closed: expected '}'");
  }

  void declare_macro(const std::string& text, int pos) {
    // `#define NAME ...` makes NAME a file-scope name.
    std::size_t p = text.find_first_not_of(" \t", 1);
    if (p == std::string::npos || text.compare(p, 6, "define") != 0) return;
    p = text.find_first_not_of(" \t", p + 6);
    if (p == std::string::npos) return;
    std::size_t e = p;
    while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
    if (e == p) return;
    const std::string name = text.substr(p, e - p);
    declare(name, 0, pos);
    // `#define real float`: an object-like macro whose body is a type makes a
    // type name, as a typedef does, so `real x = 0;` is a declaration
    // (fixed structure), never a statement to delete or copy.
    if (e < text.size() && text[e] == '(') return;
    std::string body = text.substr(e);
    if (const std::size_t comment = body.find("//"); comment != std::string::npos) body.resize(comment);
    for (std::size_t open = body.find("/*"); open != std::string::npos; open = body.find("/*", open)) {
      const std::size_t close = body.find("*/", open + 2);
      body.replace(open, close == std::string::npos ? std::string::npos : close + 2 - open, " ");
    }
    // `#define KERNEL __global__ void`: a function headed by KERNEL is a
    // kernel; `#define DEVICE __device__ inline`: one headed by DEVICE is
    // device code.
    for (const char* qualifier : {"__global__", "__device__"}) {
      const std::string q = qualifier;
      for (std::size_t at = body.find(q); at != std::string::npos; at = body.find(q, at + 1)) {
        const auto word_char = [&](std::size_t i) {
          return std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '_';
        };
        if ((at == 0 || !word_char(at - 1)) && (at + q.size() >= body.size() || !word_char(at + q.size())))
          (q == "__global__" ? kernel_macros_ : device_macros_).insert(name);
      }
    }
    bool any_type = false, only_types = true, built_in = true;
    std::string spelling;
    for (std::size_t w = 0; only_types;) {
      w = body.find_first_not_of(" \t\r\n\\", w);
      if (w == std::string::npos) break;
      std::size_t end = w;
      while (end < body.size() && (std::isalnum(static_cast<unsigned char>(body[end])) || body[end] == '_')) ++end;
      const std::string word = body.substr(w, end - w);
      if (word.empty()) only_types = false;  // punctuation: an expression, not a type
      else if (is_type_word(word) || kIntegerWords.count(word)) any_type = true;
      else if (word != "const" && word != "volatile") only_types = false;
      built_in = built_in && kBuiltinTypes.count(word) > 0;
      spelling += (spelling.empty() ? "" : " ") + word;
      w = end;
    }
    if (any_type && only_types) user_types_.insert(name);
    if (any_type && only_types && built_in) aliases_[name] = spelling;
  }

  // `name` for tokens first..last (exclusive) when they are built-in type words only.
  void note_alias(const std::string& name, std::size_t first, std::size_t last) {
    std::string spelling;
    for (std::size_t t = first; t < last && t < k_.tokens.size(); t = next_code(t + 1)) {
      if (tok(t).kind != TokenKind::Identifier || !kBuiltinTypes.count(tok(t).text)) return;
      spelling += (spelling.empty() ? "" : " ") + tok(t).text;
    }
    if (!spelling.empty()) aliases_[name] = spelling;
  }

  // `template <class T, int N>` before a declaration: the index of the
  // token after the closing '>' (nested <...> and (...) skipped; `>>` closes
  // two). Its type parameters become type names, so `T x = ...` in the body
  // is a declaration. Returns `at` itself when no template header is there.
  std::size_t skip_template_header(std::size_t at) {
    if (!is(at, "template")) return at;
    std::size_t j = next_code(at + 1);
    if (!is(j, "<")) return j;  // an explicit instantiation: `template __global__ void k<float>(...);`
    int angle = 0;
    for (; j < k_.tokens.size(); ++j) {
      const Token& t = tok(j);
      if (t.is("(")) {
        j = match(j);
        continue;
      }
      if (t.is("<")) ++angle;
      if (t.is(">")) --angle;
      if (t.is(">>")) angle -= 2;
      if ((t.is("class") || t.is("typename")) && next_code(j + 1) < k_.tokens.size() &&
          tok(next_code(j + 1)).kind == TokenKind::Identifier)
        user_types_.insert(tok(next_code(j + 1)).text);
      if (angle <= 0) return skip_template_header(next_code(j + 1));  // template <..> template <..>
    }
    fail(at, "template header never closes: expected '>' before end of file");
  }

  // Whether the punctuators ending at `p` complete an operator's name
  // (`operator` then up to three symbols: `+`, `==`, `()`, `[]`, `<<=`), so
  // the '(' after them opens its parameter list.
  bool ends_operator_name(std::size_t p, std::size_t start) const {
    for (int symbols = 0; p != std::string::npos && p >= start && symbols <= 3; ++symbols) {
      if (tok(p).is("operator")) return symbols > 0;
      if (tok(p).kind != TokenKind::Punct) return false;
      p = prev_code(p);
    }
    return false;
  }

  // Whether the '>' at `p` closes template arguments that follow a name
  // (`f<uchar>`, `g<float, 2>`), so a '(' after it opens a parameter list.
  bool ends_template_arguments(std::size_t p, std::size_t start) const {
    if (!tok(p).is(">")) return false;
    int depth = 0;
    for (std::size_t t = p; t != std::string::npos && t >= start; t = prev_code(t)) {
      if (tok(t).is(">")) ++depth;
      if (tok(t).is(">>")) depth += 2;
      if (tok(t).is("<") && --depth == 0) {
        const std::size_t name = prev_code(t);
        return name != std::string::npos && name >= start && tok(name).kind == TokenKind::Identifier &&
               !is_cpp_keyword(tok(name).text);
      }
      if (tok(t).is(";") || tok(t).is("{") || tok(t).is("}")) return false;
      if (t == start) break;
    }
    return false;
  }

  // A host function's declaration (`int load(std::vector<Record>&);`, or a
  // host template's explicit instantiation `template void f<float>(float*);`):
  // a return type before the name, no '=' (a variable's initialiser calls
  // functions), and nothing that puts it on the device (__device__,
  // __global__, __constant__, __shared__, __managed__, or a macro holding
  // one). Device code never calls such a function, and its types are
  // host-only (std::vector), so it is set aside like a host definition.
  // `MACRO(args);` names nothing before its '(' and stays: it may expand to
  // device code.
  bool host_prototype(std::size_t start, std::size_t after_template, std::size_t lp, std::size_t semi) const {
    if (lp == std::string::npos || tok(start).is("typedef") || tok(start).is("using")) return false;
    const std::size_t name = function_name_token(lp, start);
    if (name == std::string::npos || name <= after_template) return false;
    static const std::unordered_set<std::string> device_side = {"__device__", "__global__", "__constant__", "__shared__",
                                                                "__managed__", "=", "static_assert", "__launch_bounds__"};
    for (std::size_t t = start; t < semi; ++t) {
      const Token& tk = tok(t);
      if (device_side.count(tk.text)) return false;
      if (tk.kind == TokenKind::Identifier && (kernel_macros_.count(tk.text) || device_macros_.count(tk.text))) return false;
    }
    return true;
  }

  // A class or struct for the host only: it defines member functions and
  // none of it is device code (no __device__, __global__, __host__ __device__
  // or a macro holding them), as a header's timing helper holding a
  // std::vector (Rodinia's dwt2d). Device code cannot call its members; a
  // plain data struct (no member function) stays, device code may use it.
  bool host_only_class(std::size_t start, std::size_t open, std::size_t close) const {
    bool member_function = false;
    for (std::size_t t = start; t <= close; ++t) {
      const Token& tk = tok(t);
      if (tk.is("__device__") || tk.is("__global__") || tk.is("__constant__") || tk.is("__shared__")) return false;
      if (tk.kind == TokenKind::Identifier && (kernel_macros_.count(tk.text) || device_macros_.count(tk.text))) return false;
      if (t > open && tk.is(")")) {
        // `) {`, `) const {`, `) : init(x) {`: a member function's body or a constructor's list.
        std::size_t n = next_code(t + 1);
        while (n < close && (tok(n).is("const") || tok(n).is("noexcept") || tok(n).is("override"))) n = next_code(n + 1);
        if (n < close && (tok(n).is("{") || tok(n).is(":"))) member_function = true;
      }
    }
    return member_function;
  }

  // The token that names the function whose parameter list opens at `lp`:
  // the identifier before it, or before its template arguments (`f<uchar>(`).
  std::size_t function_name_token(std::size_t lp, std::size_t start) const {
    std::size_t p = prev_code(lp);
    if (p != std::string::npos && ends_template_arguments(p, start)) {
      int depth = 0;
      for (; p != std::string::npos; p = prev_code(p)) {
        if (tok(p).is(">")) ++depth;
        if (tok(p).is(">>")) depth += 2;
        if (tok(p).is("<") && --depth == 0) return prev_code(p);
      }
    }
    return prev_code(lp);
  }

  // The '{' of `namespace {`, `namespace A {`, `namespace A::B {` or
  // `inline namespace A {` starting at `at`; npos when `at` starts none (an
  // alias `namespace A = B;` is a declaration).
  std::size_t namespace_brace(std::size_t at) const {
    std::size_t j = at;
    if (is(j, "inline")) j = next_code(j + 1);
    if (!is(j, "namespace")) return std::string::npos;
    for (j = next_code(j + 1); j < k_.tokens.size(); j = next_code(j + 1)) {
      if (tok(j).is("{")) return j;
      if (tok(j).kind != TokenKind::Identifier && !tok(j).is("::")) return std::string::npos;
    }
    return std::string::npos;
  }

  // The ';' after a struct, class, union or enum definition or a braced
  // initializer, with an error that names the construct when it is missing.
  std::size_t semicolon_after_definition(std::size_t from, std::size_t first) const {
    const std::size_t semi = next_code(from);
    if (is(semi, ";")) return semi;
    std::string what = "braced initializer";
    for (std::size_t t = first; t < from; ++t)
      if (tok(t).is("struct") || tok(t).is("class") || tok(t).is("union") || tok(t).is("enum")) {
        what = tok(t).text + " definition";
        break;
      }
    // What starts another item cannot be a declarator of this one (`struct S {...} s, t;`).
    static const std::unordered_set<std::string> starts_item = {
        "__global__", "__device__", "__host__", "template", "struct", "class", "union", "enum", "namespace",
        "extern", "static", "typedef", "using", "inline"};
    if (semi >= k_.tokens.size() || tok(semi).kind == TokenKind::Preprocessor || starts_item.count(tok(semi).text))
      fail(first, "the " + what + " starting here ends without the ';' after its '}'");
    return scan_to_semicolon(from);
  }

  void parse_top_item() {
    const std::size_t start = i_;
    const std::size_t after_template = skip_template_header(i_);
    int depth = 0;
    std::size_t j = after_template;
    std::size_t last_call_paren = std::string::npos;
    for (; j < k_.tokens.size(); ++j) {
      const Token& t = tok(j);
      if (t.kind != TokenKind::Punct) continue;
      if (t.text == "(" || t.text == "[") {
        if (depth == 0 && t.text == "(") {
          const std::size_t p = prev_code(j);
          if (p != std::string::npos && p >= start && tok(p).kind == TokenKind::Identifier &&
              tok(p).text != "__launch_bounds__" && tok(p).text != "__attribute__" &&
              tok(p).text != "__align__")
            last_call_paren = j;
          else if (p != std::string::npos && p >= start && ends_operator_name(p, start))
            last_call_paren = j;  // `operator*(`, `operator()(`, `operator[](`
          else if (p != std::string::npos && p >= start && ends_template_arguments(p, start))
            last_call_paren = j;  // a specialisation: `template <> __device__ float f<uchar>()`
        }
        ++depth;
      } else if (t.text == ")" || t.text == "]") {
        if (depth == 0) fail(j, "unmatched '" + t.text + "'");
        --depth;
      } else if (depth == 0 && (t.text == ";" || t.text == "{")) {
        break;
      } else if (depth == 0 && t.text == "}") {
        fail(j, "unmatched '}': expected ';' or a function body before it");
      }
    }
    if (j >= k_.tokens.size()) fail(start, "expected ';' or a function body before end of file");
    // `class` in `template <class T>` makes no class: only what follows the header counts.
    const bool aggregate = std::any_of(k_.tokens.begin() + static_cast<long>(after_template), k_.tokens.begin() + static_cast<long>(j),
                                       [](const Token& t) { return t.is("struct") || t.is("class") || t.is("union") || t.is("enum"); });
    if (tok(j).is("{") && (aggregate || last_call_paren == std::string::npos || is(prev_code(j), "="))) {
      // struct/enum definition or a braced initializer: runs to its ';'.
      const std::size_t close = match(j);
      const std::size_t semi = semicolon_after_definition(close + 1, after_template);
      const int e = add(ElementKind::TopLevel, start, semi, 0);
      k_.elements[e].host_code = aggregate && host_only_class(start, j, close);
      for (std::size_t t = after_template; t < j; ++t)
        if ((tok(t).is("struct") || tok(t).is("class") || tok(t).is("union") || tok(t).is("enum")) &&
            t + 1 < j && tok(t + 1).kind == TokenKind::Identifier)
          user_types_.insert(tok(t + 1).text);
      const std::size_t before_semi = prev_code(semi);
      if (before_semi != std::string::npos && tok(before_semi).kind == TokenKind::Identifier) {
        if (tok(start).is("typedef")) user_types_.insert(tok(before_semi).text);
        else declare(tok(before_semi).text, 0, k_.elements[e].pos);
      }
      i_ = semi + 1;
      return;
    }
    if (tok(j).is(";")) {
      const int e = add(ElementKind::TopLevel, start, j, 0);
      k_.elements[e].host_code = host_prototype(start, after_template, last_call_paren, j);
      if (j > start) {
        if (auto d = declaration(start, j - 1))
          for (const auto& n : d->names) declare(n, 0, k_.elements[e].pos);
        if (last_call_paren != std::string::npos) declare(tok(prev_code(last_call_paren)).text, 0, k_.elements[e].pos);
        if (tok(start).is("typedef")) {
          const std::size_t p = prev_code(j);
          if (p != std::string::npos && tok(p).kind == TokenKind::Identifier) user_types_.insert(tok(p).text);
        }
      }
      i_ = j + 1;
      return;
    }
    // A function definition: header up to and including '{'.
    const std::size_t lp = last_call_paren;
    const std::size_t rp = match(lp);
    const auto qualified = [&](const std::string& q, const std::unordered_set<std::string>& macros) {
      return std::any_of(k_.tokens.begin() + static_cast<long>(start), k_.tokens.begin() + static_cast<long>(lp),
                         [&](const Token& t) { return t.is(q) || (t.kind == TokenKind::Identifier && macros.count(t.text)); });
    };
    const bool kernel = qualified("__global__", kernel_macros_);
    if (!kernel && !qualified("__device__", device_macros_)) {
      // Host code is never evolved, and real files' host code is where a C
      // subset runs out (a macro call as a statement with no ';', host-only
      // C++): the whole definition is one fixed rule.
      const std::size_t close = match(j);
      const int e = add(ElementKind::TopLevel, start, close, 0);
      k_.elements[e].host_code = true;
      declare(tok(function_name_token(lp, start)).text, 0, k_.elements[e].pos);
      i_ = close + 1;
      return;
    }
    Function f;
    f.name_token = function_name_token(lp, start);
    f.name = tok(f.name_token).text;
    f.is_kernel = kernel;
    const int fn_index = static_cast<int>(k_.functions.size());
    Block fb;
    fb.parent = 0;
    fb.function = fn_index;
    k_.blocks.push_back(fb);
    f.block = static_cast<int>(k_.blocks.size()) - 1;
    const int h = add(ElementKind::FunctionHeader, start, j, 0);
    k_.elements[h].block_after = f.block;
    f.header_element = h;
    declare(f.name, 0, k_.elements[h].pos);
    f.params = parse_params(lp, rp);
    for (const auto& p : f.params) declare(p.name, f.block, k_.elements[h].pos);
    k_.functions.push_back(std::move(f));
    i_ = j + 1;
    parse_block_items(k_.functions.back().block, j);
    add(ElementKind::BlockClose, i_, i_, k_.functions.back().block);
    k_.elements.back().block_after = 0;
    ++i_;
  }

  std::vector<Param> parse_params(std::size_t lp, std::size_t rp) const {
    std::vector<Param> params;
    std::size_t first = lp + 1;
    int depth = 0;
    for (std::size_t t = lp + 1; t <= rp; ++t) {
      const bool end = t == rp || (depth == 0 && tok(t).is(","));
      if (tok(t).is("(") || tok(t).is("[")) ++depth;
      if (t != rp && (tok(t).is(")") || tok(t).is("]"))) --depth;
      if (!end) continue;
      if (t > first) {
        Param p;
        p.tokens = {first, t - 1};
        std::size_t name_at = std::string::npos;
        for (std::size_t x = first; x < t; ++x) {
          const Token& tk = tok(x);
          if (tk.is("[")) break;
          if (tk.kind == TokenKind::Identifier && !is_cpp_keyword(tk.text) && !kBuiltinTypes.count(tk.text) &&
              !user_types_.count(tk.text))
            name_at = x;
        }
        if (name_at != std::string::npos) {
          p.name = tok(name_at).text;
          std::string base;
          for (std::size_t x = first; x < name_at; ++x) {
            const Token& tk = tok(x);
            if (tk.is("*") || tk.is("&")) {
              p.pointer = true;
              continue;
            }
            if (tk.is("const")) {
              if (!p.pointer) p.const_pointee = true;
              continue;
            }
            if (tk.is("__restrict__")) {
              p.restrict_qualified = true;
              continue;
            }
            if (tk.kind == TokenKind::Identifier && !kQualifiers.count(tk.text))
              base += (base.empty() ? "" : " ") + tk.text;
            else if (tk.kind == TokenKind::Identifier && kIntegerWords.count(tk.text))
              base += (base.empty() ? "" : " ") + tk.text;
          }
          p.base_type = base;
          params.push_back(std::move(p));
        }
      }
      first = t + 1;
    }
    return params;
  }

  // A parameter is "written" if the kernel may change it or what it points to;
  // such parameters are not candidates for __ldg or constant specialisation.
  void mark_written_params() {
    for (auto& f : k_.functions) {
      const Element& header = k_.elements[f.header_element];
      // Body tokens run from after the header to the function's closing brace.
      std::size_t body_end = header.tokens.last;
      int depth = 0;
      for (std::size_t t = header.tokens.last; t < k_.tokens.size(); ++t) {
        if (tok(t).is("{")) ++depth;
        if (tok(t).is("}") && --depth == 0) {
          body_end = t;
          break;
        }
      }
      for (auto& p : f.params) {
        for (std::size_t t = header.tokens.last + 1; t < body_end; ++t) {
          if (tok(t).kind != TokenKind::Identifier || tok(t).text != p.name) continue;
          const std::size_t prev = prev_code(t);
          if (prev != std::string::npos && (tok(prev).is(".") || tok(prev).is("->"))) continue;
          const std::size_t next = next_code(t + 1);
          if (prev != std::string::npos && (tok(prev).is("&") || tok(prev).is("++") || tok(prev).is("--") ||
                                            (p.pointer && tok(prev).is("*") && !binary_operator(prev)))) {
            p.written = true;
          } else if (p.pointer) {
            if (!is(next, "[")) {
              p.written = true;  // the pointer escapes (passed on, offset, copied)
            } else {
              const std::size_t close = match(next);
              const std::size_t after = next_code(close + 1);
              if (after < k_.tokens.size() && kAssignOps.count(tok(after).text)) p.written = true;
              if (is(after, ".")) {
                const std::size_t after_member = next_code(next_code(after + 1) + 1);
                if (after_member < k_.tokens.size() && kAssignOps.count(tok(after_member).text)) p.written = true;
              }
            }
          } else if (next < k_.tokens.size() && kAssignOps.count(tok(next).text)) {
            p.written = true;
          } else if (is(next, ".")) {
            const std::size_t after_member = next_code(next_code(next + 1) + 1);
            if (after_member < k_.tokens.size() && kAssignOps.count(tok(after_member).text)) p.written = true;
          }
        }
      }
    }
  }

  // A '*' or '&' after an operand is multiplication/bitwise-and, not a
  // dereference or address-of.
  bool binary_operator(std::size_t op) const {
    const std::size_t before = prev_code(op);
    if (before == std::string::npos) return false;
    const Token& b = tok(before);
    return b.kind == TokenKind::Number || b.is(")") || b.is("]") ||
           (b.kind == TokenKind::Identifier && !is_cpp_keyword(b.text));
  }

  std::string file_;
  ParsedKernel k_;
  std::size_t i_ = 0;
  int next_pos_ = 0;
  static constexpr int kMaxNesting = 1000;
  int depth_ = 0;  // parse_statement calls in progress
  std::unordered_set<std::string> user_types_;
  std::map<std::string, std::string> aliases_;  // of header_type_names: name -> built-in spelling
  std::unordered_set<std::string> kernel_macros_;  // object-like macros whose body holds __global__
  std::unordered_set<std::string> device_macros_;  // ... or __device__
};

}  // namespace

ParsedKernel parse_kernel(std::string_view source, const std::string& file_name,
                          const std::unordered_set<std::string>& known_types) {
  return Parser(source, file_name, known_types).run();
}

std::string header_device_view(std::string_view text, const std::string& file_name,
                               const std::unordered_set<std::string>& known_types) {
  ParsedKernel k;
  try {
    k = Parser(text, file_name, known_types).run_header();
  } catch (const SourceError&) {
    return std::string(text);  // what gi cannot parse goes to NVRTC as it is
  }
  // A line is blanked when host code covers it and nothing else on it is code.
  std::vector<char> host, other;
  const auto mark = [&](std::vector<char>& lines, const Token& t) {
    if (lines.size() <= static_cast<std::size_t>(t.end_line)) lines.resize(t.end_line + 1, 0);
    for (int l = t.line; l <= t.end_line; ++l) lines[l] = 1;
  };
  // Inactive text counts as code here: blanking the directives around it
  // alone would make it live.
  for (const Element& e : k.elements) {
    if (e.kind == ElementKind::Comment) continue;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < k.tokens.size(); ++t)
      if (k.tokens[t].kind != TokenKind::Comment || k.tokens[t].inactive) mark(e.host_code ? host : other, k.tokens[t]);
  }
  // `const float b = -a;` at file scope: nvcc folds it into device code as a
  // constant; under NVRTC's -default-device it is a __device__ variable with
  // a dynamic initialiser, an error. constexpr says what nvcc does (the
  // constants of Rodinia's dwt2d). Only scalars of builtin arithmetic types
  // with an initialiser; the line count stays.
  static const std::unordered_set<std::string> arithmetic = {"float", "double", "int", "unsigned", "signed", "long",
                                                              "short", "char", "bool"};
  std::vector<std::size_t> to_constexpr;  // offsets of `const` tokens
  for (const Element& e : k.elements) {
    if (e.kind != ElementKind::TopLevel || e.host_code || e.function >= 0) continue;
    std::vector<const Token*> code;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last && t < k.tokens.size(); ++t)
      if (k.tokens[t].kind != TokenKind::Comment) code.push_back(&k.tokens[t]);
    std::size_t c = 0;
    if (c < code.size() && code[c]->is("static")) ++c;
    if (c + 1 >= code.size() || !code[c]->is("const") || !arithmetic.count(code[c + 1]->text)) continue;
    bool initialised = false, excluded = false;
    for (const Token* t : code) {
      initialised = initialised || t->is("=");
      excluded = excluded || t->is("extern") || t->is("constexpr") || t->is("(") || t->is("__device__") ||
                 t->is("__constant__");
    }
    if (initialised && !excluded) to_constexpr.push_back(code[c]->offset);
  }
  std::string source(text);
  for (auto it = to_constexpr.rbegin(); it != to_constexpr.rend(); ++it) source.replace(*it, 5, "constexpr");
  text = source;

  std::string out;
  out.reserve(text.size());
  int line = 1;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    const bool last = end == std::string_view::npos;
    if (last) end = text.size();
    const bool blank = static_cast<std::size_t>(line) < host.size() && host[line] &&
                       !(static_cast<std::size_t>(line) < other.size() && other[line]);
    if (!blank) out.append(text.substr(at, end - at));
    if (!last) out.push_back('\n');
    at = end + 1;
    ++line;
  }
  return out;
}

std::unordered_set<std::string> header_type_names(std::string_view text, const std::string& file_name) {
  try {
    return Parser(text, file_name).header_type_names();
  } catch (const SourceError&) {
    return {};  // a header gi cannot even tokenize names no types for it; NVRTC judges it
  }
}

std::map<std::string, std::string> header_type_aliases(std::string_view text, const std::string& file_name) {
  try {
    Parser p(text, file_name);
    p.header_type_names();
    return p.type_aliases();
  } catch (const SourceError&) {
    return {};
  }
}

int resolve(const ParsedKernel& k, const std::string& name, int block, int pos) {
  // Innermost block first; within a block the latest declaration before pos.
  for (int b = block; b >= 0; b = k.blocks[b].parent) {
    int best = -1;
    for (const int d : k.block_declarations.at(b)) {
      const Declaration& decl = k.declarations[d];
      if (decl.name == name && decl.pos < pos && (best < 0 || k.declarations[best].pos <= decl.pos)) best = d;
    }
    if (best >= 0) return best;
  }
  return -1;
}

bool names_something(const ParsedKernel& k, std::size_t t, std::size_t first) {
  const Token& x = k.tokens[t];
  if (x.kind != TokenKind::Identifier || is_cpp_keyword(x.text)) return false;
  if (t <= first) return true;
  const Token& p = k.tokens[t - 1];
  return !(p.is(".") || p.is("->") || p.is("::"));
}

bool in_loop(const ParsedKernel& k, int block) {
  for (int b = block; b >= 0; b = k.blocks[b].parent)
    if (k.blocks[b].loop) return true;
  return false;
}

bool in_breakable(const ParsedKernel& k, int block) {
  for (int b = block; b >= 0; b = k.blocks[b].parent)
    if (k.blocks[b].breakable) return true;
  return false;
}

}  // namespace gi::grammar

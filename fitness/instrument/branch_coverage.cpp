#include "fitness/instrument/branch_coverage.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "grammar/call_graph.hpp"
#include "grammar/kernel_structure.hpp"
#include "grammar/source_error.hpp"

namespace gi::fitness {

namespace {

using grammar::ElementKind;
using grammar::Token;
using grammar::TokenKind;

// Tokens that end the expression a chain of && / || or a ?: condition
// belongs to, at one bracket level: what binds more loosely than || (comma,
// assignment, ?:) and what starts or ends a statement.
bool is_boundary(const Token& t) {
  static const std::set<std::string> kPunct = {",", ";", "?", ":", "=", "+=", "-=", "*=", "/=",
                                               "%=", "&=", "|=", "^=", "<<=", ">>="};
  static const std::set<std::string> kWords = {"return", "if", "for", "while", "switch", "do", "else", "case"};
  if (t.kind == TokenKind::Punct) return kPunct.count(t.text) > 0;
  return t.kind == TokenKind::Identifier && kWords.count(t.text) > 0;
}

bool is_open(const Token& t) { return t.kind == TokenKind::Punct && (t.text == "(" || t.text == "[" || t.text == "{"); }
bool is_close(const Token& t) { return t.kind == TokenKind::Punct && (t.text == ")" || t.text == "]" || t.text == "}"); }

// Declarations whose initialisers must stay constant expressions (or run
// once, not per thread): never rewritten.
bool constant_declaration(const grammar::ParsedKernel& k, const grammar::Element& e) {
  for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t)
    for (const char* word : {"constexpr", "static", "__shared__", "__constant__", "extern", "typedef", "using"})
      if (k.tokens[t].is(word)) return true;
  return false;
}

struct Wrap {
  std::size_t first = 0, last = 0;  // token span
  BranchKind kind = BranchKind::If;
  std::size_t key_token = 0;         // the token the key is named after
  int function = -1;
};

class Instrumenter {
 public:
  Instrumenter(std::string_view source, const std::string& file, const std::string& entry)
      : source_(source), file_(file), k_(grammar::parse_kernel(source, file)), counted_(counted(entry)) {}

  BranchInstrumentation run() {
    for (const grammar::Element& e : k_.elements) {
      if (e.function < 0 || !counted_[static_cast<std::size_t>(e.function)]) continue;
      switch (e.kind) {
        case ElementKind::IfHeader: if_header(e); break;
        case ElementKind::Statement:
        case ElementKind::LoopHeader:
        case ElementKind::SwitchHeader: scan(e.tokens.first, e.tokens.last, e.function); break;
        case ElementKind::Declaration: declaration(e); break;
        default: break;
      }
    }
    return rewrite();
  }

 private:
  // Per function: whether it gets counters (every function without an entry).
  std::vector<bool> counted(const std::string& entry) const {
    if (entry.empty()) return std::vector<bool>(k_.functions.size(), true);
    return grammar::functions_reachable_from(k_, entry);
  }

  const Token& tok(std::size_t i) const { return k_.tokens[i]; }

  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    throw grammar::SourceError(file_, tok(at).line, tok(at).column, message);
  }

  std::size_t match(std::size_t open) const {
    int depth = 0;
    for (std::size_t j = open; j < k_.tokens.size(); ++j) {
      if (is_open(tok(j))) ++depth;
      if (is_close(tok(j)) && --depth == 0) return j;
    }
    fail(open, "'" + tok(open).text + "' is never closed");  // the parser accepted it, so unreachable
  }

  // [first, last] without comments at either end; false when nothing is left.
  bool trim(std::size_t& first, std::size_t& last) const {
    if (first > last) return false;
    while (first <= last && tok(first).kind == TokenKind::Comment) ++first;
    while (last > first && tok(last).kind == TokenKind::Comment) --last;
    return first <= last && tok(first).kind != TokenKind::Comment;
  }

  void add(std::size_t first, std::size_t last, BranchKind kind, std::size_t key_token, int function) {
    // The wrap's text goes before the first and after the last token: a
    // preprocessor line inside the span would leave one of them in a
    // branch of an #if the compiler drops.
    for (std::size_t t = first; t <= last; ++t)
      if (tok(t).kind == TokenKind::Preprocessor)
        fail(t, "cannot instrument the branch condition at line " + std::to_string(tok(first).line) + ", column " +
                    std::to_string(tok(first).column) +
                    " for coverage: a preprocessor line inside it (expected a condition without #if/#define lines)");
    wraps_.push_back(Wrap{first, last, kind, key_token, function});
  }

  void if_header(const grammar::Element& e) {
    const grammar::TokenRange cond = *e.condition;  // `(` ... `)`
    std::size_t first = cond.first + 1, last = cond.last - 1;
    if (cond.last <= cond.first + 1 || !trim(first, last)) fail(e.tokens.first, "empty 'if' condition: expected an expression");
    // if (init; condition): only the condition decides the branch.
    int depth = 0;
    for (std::size_t t = first; t <= last; ++t) {
      if (is_open(tok(t))) ++depth;
      if (is_close(tok(t))) --depth;
      if (depth == 0 && tok(t).is(";")) first = t + 1;
    }
    if (!trim(first, last)) fail(e.tokens.first, "empty 'if' condition after its init-statement: expected an expression");
    // `if (int x = f())` declares: wrapping would not compile. An expression
    // never has two identifiers in a row (`sizeof x` aside).
    std::size_t second = first + 1;
    while (second <= last && tok(second).kind == TokenKind::Comment) ++second;
    if (second <= last && tok(first).kind == TokenKind::Identifier && tok(second).kind == TokenKind::Identifier &&
        !tok(first).is("sizeof"))
      fail(first, "cannot instrument a declaration as an 'if' condition for coverage: expected an expression");
    add(first, last, BranchKind::If, e.tokens.first, e.function);
    scan(cond.first + 1, cond.last - 1, e.function);
  }

  void declaration(const grammar::Element& e) {
    if (constant_declaration(k_, e)) return;
    // Only initialisers: before the first `=` stand the type (where `&&`
    // is an rvalue reference) and array bounds (constant expressions).
    int depth = 0;
    for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) {
      if (is_open(tok(t))) ++depth;
      if (is_close(tok(t))) --depth;
      if (depth == 0 && tok(t).is("=")) {
        scan(t + 1, e.tokens.last, e.function);
        return;
      }
    }
  }

  // One bracket level [first, last]: split into expressions at boundaries;
  // brackets are scanned as levels of their own.
  void scan(std::size_t first, std::size_t last, int function) {
    if (first > last || last >= k_.tokens.size()) return;
    std::size_t start = first;
    std::vector<std::size_t> ops;
    for (std::size_t t = first; t <= last; ++t) {
      const Token& x = tok(t);
      if (x.kind == TokenKind::Comment) continue;
      if (is_open(x)) {
        const std::size_t close = match(t);
        if (close > t + 1) scan(t + 1, close - 1, function);
        t = close;
        continue;
      }
      if (x.is("&&") || x.is("||")) {
        ops.push_back(t);
      } else if (is_boundary(x)) {
        expression(start, t, ops, x.is("?"), function);
        start = t + 1;
        ops.clear();
      }
    }
    expression(start, last + 1, ops, false, function);
  }

  // The expression [first, end) at one level, its && / || tokens `ops`;
  // `condition`: it stands before a `?`.
  void expression(std::size_t first, std::size_t end, const std::vector<std::size_t>& ops, bool condition,
                  int function) {
    if (end <= first) return;
    if (condition) {
      std::size_t a = first, b = end - 1;
      if (trim(a, b)) add(a, b, BranchKind::Ternary, a, function);
    }
    if (ops.empty()) return;
    std::size_t piece = first;
    for (std::size_t i = 0; i <= ops.size(); ++i) {
      const std::size_t stop = i < ops.size() ? ops[i] : end;
      std::size_t a = piece, b = stop - 1;
      if (stop > piece && trim(a, b)) add(a, b, BranchKind::Operand, a, function);
      piece = stop + 1;
    }
  }

  std::string span_text(std::size_t first, std::size_t last) const {
    const std::size_t begin = tok(first).offset, end = tok(last).offset + tok(last).text.size();
    std::string text;
    bool space = false;
    for (const char c : source_.substr(begin, end - begin)) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (space && !text.empty()) text += ' ';
      space = false;
      text += c;
    }
    return text;
  }

  BranchInstrumentation rewrite() {
    // Ids in source order of the key token; at one token `if`, then `op`,
    // then `?:` (one token is the key of at most one site of each kind).
    std::sort(wraps_.begin(), wraps_.end(), [](const Wrap& a, const Wrap& b) {
      return std::pair(a.key_token, static_cast<int>(a.kind)) < std::pair(b.key_token, static_cast<int>(b.kind));
    });
    BranchInstrumentation result;
    std::map<std::string, std::size_t> keys;
    for (const Wrap& w : wraps_) {
      BranchSite s;
      s.kind = w.kind;
      s.line = tok(w.key_token).line;
      s.column = tok(w.key_token).column;
      s.key = to_string(w.kind) + "@" + std::to_string(s.line) + ":" + std::to_string(s.column);
      s.text = span_text(w.first, w.last);
      s.function = k_.functions[static_cast<std::size_t>(w.function)].name;
      if (!keys.emplace(s.key, result.sites.size()).second)
        fail(w.key_token, "two branch sites with the key " + s.key + " (expected one site per kind and token)");
      result.sites.push_back(std::move(s));
    }
    // Insertions at byte offsets. At one offset, closings come first (they
    // end spans that lie before it), then openings, the wider span first so
    // that it encloses the narrower one. (All closings are the same text.)
    struct Insertion {
      std::size_t offset;
      int order;         // 0: close, 1: open
      std::size_t rank;  // openings: ~end, so the later end sorts first
      std::string text;
    };
    std::vector<Insertion> insertions;
    for (std::size_t id = 0; id < wraps_.size(); ++id) {
      const Wrap& w = wraps_[id];
      const std::size_t begin = tok(w.first).offset, end = tok(w.last).offset + tok(w.last).text.size();
      insertions.push_back({begin, 1, ~end, "gi_branch(" + std::to_string(id) + ", ("});
      insertions.push_back({end, 0, 0, "))"});
    }
    std::stable_sort(insertions.begin(), insertions.end(), [](const Insertion& a, const Insertion& b) {
      return std::tuple(a.offset, a.order, a.rank) < std::tuple(b.offset, b.order, b.rank);
    });
    std::string body;
    std::size_t at = 0;
    for (const Insertion& i : insertions) {
      body.append(source_.substr(at, i.offset - at));
      body += i.text;
      at = i.offset;
    }
    body.append(source_.substr(at));

    result.source = preamble(result.counters(), result.sites.size()) + body;
    return result;
  }

  std::string preamble(std::size_t counters, std::size_t sites) const {
    // #line keeps compiler messages on the seed's own line numbers.
    std::string file = file_;
    std::replace(file.begin(), file.end(), '"', '\'');
    std::replace(file.begin(), file.end(), '\\', '/');
    return "// gi: branch-coverage instrumentation (fitness/instrument/branch_coverage.hpp), " + std::to_string(sites) +
           " sites\n"
           "extern \"C\" {\n"
           "__device__ unsigned long long gi_branch_counts[" + std::to_string(counters) + "];\n"
           "}\n" +
           R"(template <typename GiValue>
static __device__ __forceinline__ bool gi_branch(int gi_site, GiValue gi_value) {
  const bool gi_taken = static_cast<bool>(gi_value);
  // Only the lanes here now take part; lanes of one warp that met in here
  // from different sites are told apart by the site.
  const unsigned gi_active = __activemask();
  const unsigned gi_same = __match_any_sync(gi_active, gi_site);
  const unsigned gi_true = __ballot_sync(gi_same, gi_taken);
  unsigned gi_lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(gi_lane));
  if (gi_lane == static_cast<unsigned>(__ffs(gi_same) - 1)) {
    const unsigned gi_yes = __popc(gi_true);
    const unsigned gi_no = __popc(gi_same) - gi_yes;
    if (gi_yes != 0) atomicAdd(&gi_branch_counts[2 * gi_site + 1], static_cast<unsigned long long>(gi_yes));
    if (gi_no != 0) atomicAdd(&gi_branch_counts[2 * gi_site], static_cast<unsigned long long>(gi_no));
  }
  return gi_taken;
}
)" + "#line 1 \"" + file + "\"\n";
  }

  std::string_view source_;
  std::string file_;
  grammar::ParsedKernel k_;
  std::vector<bool> counted_;  // per function: whether its branches get counters
  std::vector<Wrap> wraps_;
};

}  // namespace

std::string to_string(BranchKind kind) {
  switch (kind) {
    case BranchKind::If: return "if";
    case BranchKind::Operand: return "op";
    case BranchKind::Ternary: return "?:";
  }
  return "?";
}

BranchInstrumentation instrument_branches(std::string_view source, const std::string& file_name,
                                          const std::string& entry) {
  return Instrumenter(source, file_name, entry).run();
}

std::optional<BranchKey> parse_branch_key(std::string_view key) {
  const std::size_t at = key.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  BranchKey k;
  const std::string_view kind = key.substr(0, at);
  if (kind == "if") k.kind = BranchKind::If;
  else if (kind == "op") k.kind = BranchKind::Operand;
  else if (kind == "?:") k.kind = BranchKind::Ternary;
  else return std::nullopt;
  const std::string_view position = key.substr(at + 1);
  const std::size_t colon = position.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view digits, int& out) {
    if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
          return c >= '0' && c <= '9';
        }))
      return false;
    std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return out > 0;
  };
  if (!number(position.substr(0, colon), k.line) || !number(position.substr(colon + 1), k.column)) return std::nullopt;
  return k;
}

}  // namespace gi::fitness

#include "grammar/grammar_text.hpp"

#include <boost/spirit/home/x3.hpp>
#include <map>
#include <set>

#include "grammar/source_error.hpp"

namespace gi::grammar {
namespace x3 = boost::spirit::x3;

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string kind_name(RuleKind k) {
  switch (k) {
    case RuleKind::Statement: return "statement";
    case RuleKind::Declaration: return "declaration";
    case RuleKind::If: return "if";
    case RuleKind::For: return "for";
    case RuleKind::Pragma: return "pragma";
    case RuleKind::Fixed: return "fixed";
  }
  return "?";
}

// One parsed BNF line: a rule name and its right-hand side items.
struct Item {
  bool is_ref = false;
  std::string text;  // literal text (unescaped) or the referenced name
};
struct BnfLine {
  std::string name;
  std::vector<Item> items;
  int line = 0;
};

using Iterator = std::string_view::const_iterator;

const auto name_p = x3::raw[x3::lit('<') >> +(x3::char_ - '>' - '\n' - ' ') >> x3::lit('>')];

}  // namespace

std::string to_bnf(const Grammar& g) {
  std::string out = "# gi-grammar 1 file=" + quote(g.file_name()) +
                    " final-newline=" + (g.final_newline() ? "1" : "0") + "\n<start> ::=";
  for (std::size_t i = 0; i < g.rules().size(); ++i) out += " " + g.rule_name(i);
  out += "\n";
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const Rule& r = g.rule(i);
    out += g.rule_name(i) + " ::=";
    if (r.sub_kind == SubKind::None) {
      out += " " + quote(r.text) + "\n";
      continue;
    }
    out += " " + quote(r.text.substr(0, r.sub.offset)) + " " + g.sub_name(i) + " " +
           quote(r.text.substr(r.sub.offset + r.sub.length)) + "\n";
    out += g.sub_name(i) + " ::= " + quote(r.sub_text()) + "\n";
  }
  return out;
}

Grammar from_bnf(std::string_view text, const std::string& origin) {
  std::vector<BnfLine> lines;
  std::string file_name;
  bool final_newline = true;
  bool header = false;
  int line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(start, nl - start);
    ++line_no;
    start = nl + 1;
    if (line.empty()) continue;
    auto fail = [&](Iterator at, const std::string& message) {
      throw SourceError(origin, line_no, static_cast<int>(at - line.begin()) + 1, message);
    };
    // The rest of a quoted string whose opening '"' was read: undoes quote().
    auto unquote = [&](Iterator& at) {
      std::string s;
      while (true) {
        if (at == line.end()) fail(at, "unterminated string: expected '\"'");
        if (*at == '"') {
          ++at;
          return s;
        }
        if (*at == '\\') {
          ++at;
          if (at == line.end()) fail(at, "expected an escape after '\\'");
          switch (*at) {
            case 'n': s += '\n'; break;
            case 't': s += '\t'; break;
            case 'r': s += '\r'; break;
            case '"': s += '"'; break;
            case '\\': s += '\\'; break;
            default: fail(at, std::string("unknown escape '\\") + *at + "'");
          }
          ++at;
          continue;
        }
        s += *at++;
      }
    };
    Iterator it = line.begin();
    if (line.front() == '#') {
      int newline_flag = 1;
      std::string parsed_name;
      Iterator h = line.begin();
      if (!x3::parse(h, line.end(), x3::lit("# gi-grammar 1 file=\""))) {
        if (!header) fail(line.begin(), "expected the header '# gi-grammar 1 file=\"NAME\" final-newline=0|1'");
        continue;  // later comment lines are allowed
      }
      // to_bnf quotes the file name like any string, so it is unquoted the
      // same way: read raw, a name with '\\' or '"' did not survive a round
      // trip (found with fuzz/fuzz_bnf).
      parsed_name = unquote(h);
      if (!x3::parse(h, line.end(), x3::lit(" final-newline=") >> x3::int_ >> x3::eoi, newline_flag))
        fail(h, "expected ' final-newline=0|1' to end the header");
      file_name = parsed_name;
      final_newline = newline_flag != 0;
      header = true;
      continue;
    }
    if (!header) fail(it, "expected the header '# gi-grammar 1 file=\"NAME\" final-newline=0|1' first");
    BnfLine bl;
    bl.line = line_no;
    std::string name;
    if (!x3::parse(it, line.end(), name_p, name)) fail(it, "expected a rule name like <_kernel.cu_42>");
    bl.name = name;
    if (!x3::parse(it, line.end(), x3::lit(" ::="))) fail(it, "expected ' ::=' after " + name);
    while (it != line.end()) {
      if (!x3::parse(it, line.end(), x3::lit(' '))) fail(it, "expected a space between items");
      Item item;
      std::string s;
      if (it != line.end() && *it == '<') {
        if (!x3::parse(it, line.end(), name_p, s)) fail(it, "expected a rule name closed by '>'");
        item.is_ref = true;
      } else if (it != line.end() && *it == '"') {
        ++it;
        s = unquote(it);
      } else {
        fail(it, "expected a quoted string or a rule name");
      }
      item.text = s;
      bl.items.push_back(std::move(item));
    }
    lines.push_back(std::move(bl));
  }
  if (!header) throw SourceError(origin, 1, 0, "empty grammar: expected the '# gi-grammar 1' header");
  if (lines.empty() || lines.front().name != "<start>")
    throw SourceError(origin, lines.empty() ? 1 : lines.front().line, 1, "expected '<start> ::=' as the first rule");

  // Rebuild the source from the rules, then the grammar from the source, and
  // require both to agree: the text cannot describe a grammar the builder would not make.
  std::map<std::string, const BnfLine*> by_name;
  for (const auto& l : lines) {
    if (by_name.count(l.name)) throw SourceError(origin, l.line, 1, "rule " + l.name + " is defined twice");
    by_name[l.name] = &l;
  }
  // Each rule is spelled out at most once, as in to_bnf's output: a rule used
  // many times by rules that are themselves used many times would spell a
  // source exponentially larger than the text (an 8 KB file ran out of memory
  // in fuzz/fuzz_bnf). Used once each, the source is never longer than the text.
  std::set<std::string> used;
  auto use = [&](const BnfLine& by, const std::string& name) {
    if (!used.insert(name).second)
      throw SourceError(origin, by.line, 1, "rule " + name + " is used more than once (in " + by.name + ")");
  };
  auto expand = [&](const BnfLine& l, auto&& self, int depth) -> std::string {
    if (depth > 2) throw SourceError(origin, l.line, 1, "rule " + l.name + " nests too deep");
    std::string out;
    for (const auto& item : l.items) {
      if (!item.is_ref) {
        out += item.text;
        continue;
      }
      const auto f = by_name.find(item.text);
      if (f == by_name.end()) throw SourceError(origin, l.line, 1, "unknown rule " + item.text + " used by " + l.name);
      use(l, item.text);
      out += self(*f->second, self, depth + 1);
    }
    return out;
  };
  const BnfLine& start_rule = lines.front();
  std::string source;
  for (std::size_t i = 0; i < start_rule.items.size(); ++i) {
    const Item& item = start_rule.items[i];
    if (!item.is_ref) throw SourceError(origin, start_rule.line, 1, "<start> must list rule names only");
    const auto f = by_name.find(item.text);
    if (f == by_name.end()) throw SourceError(origin, start_rule.line, 1, "unknown rule " + item.text + " in <start>");
    use(start_rule, item.text);
    if (i) source += '\n';
    source += expand(*f->second, expand, 0);
  }
  if (final_newline) source += '\n';
  Grammar g = Grammar::from_source(source, file_name);
  const std::string canonical = to_bnf(g);
  if (g.rules().size() != start_rule.items.size())
    throw SourceError(origin, start_rule.line, 1, "the rules do not match the grammar of the source they spell: expected " +
                                                      std::to_string(g.rules().size()) + " line rules");
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const std::string& given = start_rule.items[i].text;
    if (given != g.rule_name(i))
      throw SourceError(origin, by_name[given]->line, 1, "rule " + given + " does not match its source: expected " + g.rule_name(i));
    if (g.rule(i).sub_kind != SubKind::None && !by_name.count(g.sub_name(i)))
      throw SourceError(origin, by_name[given]->line, 1, "expected sub-rule " + g.sub_name(i) + " in " + given);
  }
  return g;
}

// Linear in the file's size: each declaration is listed once, in the scope
// table, and a rule names only its place (block, position); the names
// visible at a rule follow from the table (the README says how). A list of
// visible names per rule grew with the square of the file (a 5 MB file of
// 2,500 kernels did not finish).
nlohmann::json to_json(const Grammar& g) {
  const ParsedKernel& k = g.parsed();
  nlohmann::json scopes = nlohmann::json::array();
  for (std::size_t b = 0; b < k.blocks.size(); ++b) {
    nlohmann::json declarations = nlohmann::json::array();
    for (const int d : k.block_declarations.at(b)) {
      const Declaration& decl = k.declarations[d];
      declarations.push_back({{"name", decl.name},
                              {"line", k.tokens[k.elements[decl.pos].tokens.first].line},
                              {"pos", decl.pos}});
    }
    scopes.push_back({{"block", b},
                      {"parent", k.blocks[b].parent},
                      {"function", k.blocks[b].function >= 0 ? k.functions[k.blocks[b].function].name : ""},
                      {"declarations", declarations}});
  }
  nlohmann::json rules = nlohmann::json::array();
  for (std::size_t i = 0; i < g.rules().size(); ++i) {
    const Rule& r = g.rule(i);
    const RuleContext& c = g.context(i);
    nlohmann::json j = {{"name", g.rule_name(i)}, {"kind", kind_name(r.kind)}, {"first_line", r.first_line},
                        {"last_line", r.last_line}, {"text", r.text}};
    if (r.sub_kind != SubKind::None)
      j["sub"] = {{"name", g.sub_name(i)}, {"text", r.sub_text()}, {"offset", r.sub.offset}};
    if (c.function >= 0 || c.anchor_ok) {
      j["function"] = c.function >= 0 ? k.functions[c.function].name : "";
      j["identifiers"] = c.identifiers;
      j["scope"] = {{"block", c.block}, {"pos", c.pos}};
      j["insert_after_ok"] = c.anchor_ok;
      if (c.braceless_body) j["braceless_body"] = true;
    }
    rules.push_back(std::move(j));
  }
  return {{"format", "gi-grammar-json-2"}, {"file", g.file_name()}, {"final_newline", g.final_newline()},
          {"scopes", scopes}, {"rules", rules}};
}

}  // namespace gi::grammar

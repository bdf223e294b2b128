// Groups the parser's elements into line rules and derives each rule's scope
// context. A rule covers whole source lines, so the patched file keeps the
// seed's layout and a diff against it reads line by line.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "grammar/grammar.hpp"
#include "grammar/source_error.hpp"

namespace gi::grammar {

std::string rule_prefix(RuleKind kind) {
  switch (kind) {
    case RuleKind::Statement: return "_";
    case RuleKind::Declaration: return "decl_";
    case RuleKind::If: return "if_";
    case RuleKind::For: return "for_";
    case RuleKind::Pragma: return "pragma_";
    case RuleKind::Fixed: return "fixed_";
  }
  return "?";
}

std::string sub_prefix(SubKind kind) {
  switch (kind) {
    case SubKind::Condition: return "IF_";
    case SubKind::Type: return "type_";
    case SubKind::None: return "";
  }
  return "?";
}

class GrammarBuilder {
 public:
  GrammarBuilder(std::string_view source, const std::string& file, const std::unordered_set<std::string>& known_types)
      : source_(source) {
    g_.file_name_ = file;
    g_.parsed_ = parse_kernel(source, file, known_types);
    g_.assignments_ = local_assignments(g_.parsed_);
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < source.size(); ++i)
      if (source[i] == '\n') line_starts_.push_back(i + 1);
    g_.final_newline_ = !source.empty() && source.back() == '\n';
    line_count_ = static_cast<int>(line_starts_.size()) - (g_.final_newline_ ? 1 : 0);
  }

  Grammar build() {
    const auto& elements = g_.parsed_.elements;
    g_.rule_of_element_.assign(elements.size(), -1);
    int next_line = 1;
    std::size_t e = 0;
    while (e < elements.size()) {
      int first = first_line(elements[e]);
      int last = last_line(elements[e]);
      std::size_t end = e + 1;
      while (end < elements.size() && first_line(elements[end]) <= last) {
        last = std::max(last, last_line(elements[end]));
        ++end;
      }
      for (; next_line < first; ++next_line) add_fixed_line(next_line);
      add_group(e, end, first, last);
      next_line = last + 1;
      e = end;
    }
    for (; next_line <= line_count_; ++next_line) add_fixed_line(next_line);
    if (g_.source() != source_)
      throw std::logic_error("grammar of " + g_.file_name_ + " does not reproduce its source");
    return std::move(g_);
  }

 private:
  const Token& tok(std::size_t i) const { return g_.parsed_.tokens[i]; }
  int first_line(const Element& e) const { return tok(e.tokens.first).line; }
  int last_line(const Element& e) const { return tok(e.tokens.last).end_line; }

  std::string lines_text(int first, int last) const {
    const std::size_t begin = line_starts_[first - 1];
    std::size_t end = last < static_cast<int>(line_starts_.size()) ? line_starts_[last] - 1 : source_.size();
    return std::string(source_.substr(begin, end - begin));
  }

  void add_fixed_line(int line) {
    Rule r;
    r.first_line = r.last_line = line;
    r.text = lines_text(line, line);
    g_.rules_.push_back(std::move(r));
    g_.contexts_.emplace_back();
    g_.contexts_.back().source_offset = line_starts_[line - 1];
  }

  Span span_of(TokenRange range, int rule_first_line) const {
    const std::size_t base = line_starts_[rule_first_line - 1];
    const std::size_t begin = tok(range.first).offset;
    const std::size_t end = tok(range.last).offset + tok(range.last).text.size();
    return Span{begin - base, end - begin};
  }

  std::vector<std::string> identifiers_in(TokenRange range) const {
    std::vector<std::string> ids;
    for (std::size_t t = range.first; t <= range.last; ++t) {
      if (!names_something(g_.parsed_, t, range.first)) continue;
      const Token& x = tok(t);
      if (std::find(ids.begin(), ids.end(), x.text) == ids.end()) ids.push_back(x.text);
    }
    return ids;
  }

  static TypeClass type_class_of(const std::string& type_text) {
    if (type_text == "float" || type_text == "double") return TypeClass::Floating;
    return TypeClass::Integer;  // the parser only marks float or integer scalars
  }

  void add_group(std::size_t begin, std::size_t end, int first, int last) {
    const auto& elements = g_.parsed_.elements;
    std::vector<std::size_t> code;
    for (std::size_t i = begin; i < end; ++i)
      if (elements[i].kind != ElementKind::Comment) code.push_back(i);

    Rule r;
    r.first_line = first;
    r.last_line = last;
    r.text = lines_text(first, last);
    RuleContext c;
    c.source_offset = line_starts_[first - 1];
    const int rule_index = static_cast<int>(g_.rules_.size());
    for (std::size_t i = begin; i < end; ++i) g_.rule_of_element_[i] = rule_index;

    if (!code.empty()) {
      const Element& head = elements[code.front()];
      const Element& tail = elements[code.back()];
      c.function = head.function;
      c.block = head.block;
      c.pos = head.pos;
      c.block_after = tail.block_after;
      c.pos_after = tail.pos + 1;
      const int after_function = g_.parsed_.blocks[c.block_after].function;
      // Nothing goes between a header and its body, even when the body's `{`
      // stands on the next line: there a copy would become the body and the
      // old block would run unconditionally (found on real-world kernels).
      const bool open_header = tail.kind == ElementKind::IfHeader || tail.kind == ElementKind::ElseHeader ||
                               tail.kind == ElementKind::SwitchHeader ||
                               (tail.kind == ElementKind::LoopHeader && !tok(tail.tokens.last).is(";"));
      // A copy after a directive whose branch is inactive text (`#if 0 ...
      // #elif X`) would be inactive too: an edit that changes nothing.
      const std::size_t next = tail.tokens.last + 1;
      const bool opens_inactive = next < g_.parsed_.tokens.size() && tok(next).inactive;
      c.anchor_ok = after_function >= 0 && !tail.awaits_braceless_body && !tail.followed_by_continuation &&
                    !open_header && tail.kind != ElementKind::Pragma &&
                    (tail.kind != ElementKind::Preprocessor || (tail.conditional && !opens_inactive));
      c.host_code = std::any_of(code.begin(), code.end(), [&](std::size_t i) { return elements[i].host_code; });
      for (std::size_t f = 0; f < g_.parsed_.functions.size(); ++f)
        for (std::size_t i : code)
          if (g_.parsed_.functions[f].header_element == static_cast<int>(i)) c.function_header = static_cast<int>(f);
      classify(r, c, code);
    }
    g_.rules_.push_back(std::move(r));
    g_.contexts_.push_back(std::move(c));
  }

  void classify(Rule& r, RuleContext& c, const std::vector<std::size_t>& code) {
    const auto& elements = g_.parsed_.elements;
    auto kind_of = [&](std::size_t i) { return elements[i].kind; };
    const bool all_statements = std::all_of(code.begin(), code.end(), [&](std::size_t i) {
      return kind_of(i) == ElementKind::Statement;
    });
    if (all_statements) {
      r.kind = RuleKind::Statement;
      c.braceless_body = elements[code.front()].braceless_body;
      c.statements = static_cast<int>(code.size());
      for (std::size_t i : code) {
        for (const auto& id : identifiers_in(elements[i].tokens))
          if (std::find(c.identifiers.begin(), c.identifiers.end(), id) == c.identifiers.end())
            c.identifiers.push_back(id);
        for (const auto& id : names_read(g_.parsed_, elements[i].tokens))
          if (std::find(c.reads.begin(), c.reads.end(), id) == c.reads.end()) c.reads.push_back(id);
        for (std::size_t t = elements[i].tokens.first; t <= elements[i].tokens.last; ++t) {
          c.uses_break |= tok(t).is("break");
          c.uses_continue |= tok(t).is("continue");
        }
      }
      return;
    }
    if (code.size() == 1 && kind_of(code[0]) == ElementKind::Declaration) {
      r.kind = RuleKind::Declaration;
      if (const auto& st = elements[code[0]].scalar_type) {
        r.sub_kind = SubKind::Type;
        r.sub = span_of(*st, r.first_line);
        c.type_class = type_class_of(r.sub_text());
      }
      return;
    }
    if (code.size() == 1 && kind_of(code[0]) == ElementKind::Pragma && elements[code[0]].function >= 0) {
      r.kind = RuleKind::Pragma;
      return;
    }
    // An if line: one IfHeader, braces/else around it, a braceless body after it.
    int if_at = -1;
    bool if_shape = true;
    for (std::size_t n = 0; n < code.size(); ++n) {
      const ElementKind k = kind_of(code[n]);
      if (k == ElementKind::IfHeader) {
        if (if_at >= 0) if_shape = false;
        if_at = static_cast<int>(n);
      } else if (k == ElementKind::Statement) {
        if (if_at < 0) if_shape = false;
      } else if (k != ElementKind::BlockOpen && k != ElementKind::BlockClose && k != ElementKind::ElseHeader) {
        if_shape = false;
      }
    }
    if (if_at >= 0 && if_shape && elements[code[if_at]].function >= 0) {
      r.kind = RuleKind::If;
      r.sub_kind = SubKind::Condition;
      r.sub = span_of(*elements[code[if_at]].condition, r.first_line);
      // The condition is evaluated where the header stands, not where the
      // line starts (`} else if (...)` starts by closing the previous block).
      c.block = elements[code[if_at]].block;
      c.pos = elements[code[if_at]].pos;
      c.identifiers = identifiers_in(*elements[code[if_at]].condition);
      c.reads = names_read(g_.parsed_, *elements[code[if_at]].condition);
      return;
    }
    if (kind_of(code[0]) == ElementKind::LoopHeader && elements[code[0]].is_for &&
        std::all_of(code.begin() + 1, code.end(), [&](std::size_t i) { return kind_of(i) == ElementKind::BlockOpen; })) {
      r.kind = RuleKind::For;
      c.for_element = static_cast<int>(code[0]);
      return;
    }
    r.kind = RuleKind::Fixed;
  }

  std::string_view source_;
  std::vector<std::size_t> line_starts_;
  int line_count_ = 0;
  Grammar g_;
};

Grammar Grammar::from_source(std::string_view source, const std::string& file_name,
                             const std::unordered_set<std::string>& known_types) {
  return GrammarBuilder(without_utf8_bom(source), file_name, known_types).build();
}

std::string Grammar::rule_name(std::size_t i) const {
  return "<" + rule_prefix(rules_.at(i).kind) + file_name_ + "_" + std::to_string(rules_[i].first_line) + ">";
}

std::string Grammar::sub_name(std::size_t i) const {
  if (rules_.at(i).sub_kind == SubKind::None) return "";
  return "<" + sub_prefix(rules_[i].sub_kind) + file_name_ + "_" + std::to_string(rules_[i].first_line) + ">";
}

std::optional<std::size_t> Grammar::find(std::string_view name, bool* is_sub) const {
  std::string n(name);
  if (n.size() < 2 || n.front() != '<') n = "<" + n + ">";
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (rule_name(i) == n) {
      if (is_sub) *is_sub = false;
      return i;
    }
    if (rules_[i].sub_kind != SubKind::None && sub_name(i) == n) {
      if (is_sub) *is_sub = true;
      return i;
    }
  }
  return std::nullopt;
}

std::string Grammar::source() const {
  std::string out;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (i) out += '\n';
    out += rules_[i].text;
  }
  if (final_newline_) out += '\n';
  return out;
}

std::vector<std::string> Grammar::visible_declarations(std::size_t i) const {
  const RuleContext& c = contexts_.at(i);
  // What each name means here (resolve's rule: the innermost block first,
  // in a block the latest declaration before the rule), block by block.
  std::unordered_set<std::string> seen;
  std::vector<int> chosen;
  for (int b = c.block; b >= 0; b = parsed_.blocks[b].parent) {
    std::unordered_map<std::string, int> latest;
    for (const int d : parsed_.block_declarations.at(b)) {
      const Declaration& decl = parsed_.declarations[d];
      if (decl.pos >= c.pos || seen.count(decl.name)) continue;
      auto [it, fresh] = latest.emplace(decl.name, d);
      if (!fresh && parsed_.declarations[it->second].pos <= decl.pos) it->second = d;
    }
    for (const auto& [name, d] : latest) {
      seen.insert(name);
      chosen.push_back(d);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<std::string> out;
  for (const int d : chosen) {
    const Declaration& decl = parsed_.declarations[d];
    out.push_back(decl.name + "@" + std::to_string(parsed_.tokens[parsed_.elements[decl.pos].tokens.first].line));
  }
  return out;
}

}  // namespace gi::grammar

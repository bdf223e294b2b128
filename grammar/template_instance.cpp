#include "grammar/template_instance.hpp"

#include <stdexcept>

#include "grammar/grammar.hpp"

namespace gi::grammar {

namespace {

std::string trimmed(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// The code tokens (no comments) of [first, last], as indices.
std::vector<std::size_t> code_tokens(const ParsedKernel& k, std::size_t first, std::size_t last) {
  std::vector<std::size_t> out;
  for (std::size_t t = first; t <= last && t < k.tokens.size(); ++t)
    if (k.tokens[t].kind != TokenKind::Comment) out.push_back(t);
  return out;
}

// The source text of tokens [first, last] (code as written, whitespace collapsed).
std::string text_of(const ParsedKernel& k, const std::vector<std::size_t>& code, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    const Token& t = k.tokens[code[i]];
    if (!out.empty() && i > from) {
      const Token& p = k.tokens[code[i - 1]];
      // A space where the source had one between two words (`unsigned int`).
      if (p.offset + p.text.size() < t.offset) out += ' ';
    }
    out += t.text;
  }
  return out;
}

// The index in `code` of the `>` closing the `<` at code[open] (nested <>
// and () counted); code.size() where it never closes.
std::size_t closing_angle(const ParsedKernel& k, const std::vector<std::size_t>& code, std::size_t open) {
  int angle = 0, paren = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    const Token& t = k.tokens[code[i]];
    if (t.is("(")) ++paren;
    else if (t.is(")")) --paren;
    else if (paren == 0 && t.is("<")) ++angle;
    else if (paren == 0 && t.is(">") && --angle == 0) return i;
    else if (paren == 0 && t.is(">>") && (angle -= 2) <= 0) return i;
  }
  return code.size();
}

// What stands between code[open] `<` and code[close] `>`, split at its
// top-level commas: each part as [first, end) indices into `code`.
std::vector<std::pair<std::size_t, std::size_t>> angle_parts(const ParsedKernel& k, const std::vector<std::size_t>& code,
                                                             std::size_t open, std::size_t close) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  int depth = 0;
  std::size_t from = open + 1;
  for (std::size_t i = open + 1; i <= close; ++i) {
    const Token& t = k.tokens[code[i]];
    if (t.is("<") || t.is("(")) ++depth;
    else if ((t.is(">") || t.is(")")) && i < close) --depth;
    if (i == close || (depth == 0 && t.is(","))) {
      out.emplace_back(from, i);
      from = i + 1;
    }
  }
  return out;
}

}  // namespace

std::string entry_function_name(const std::string& entry) {
  std::string base = entry.substr(0, entry.find('<'));
  if (const std::size_t colons = base.rfind("::"); colons != std::string::npos) base = base.substr(colons + 2);
  return trimmed(base);
}

std::string TemplateInstance::entry() const {
  std::string e = name + "<";
  for (std::size_t i = 0; i < args.size(); ++i) e += (i ? ", " : "") + args[i];
  return e + ">";
}

std::optional<TemplateInstance> parse_template_instance(const std::string& entry) {
  const std::size_t open = entry.find('<');
  if (open == std::string::npos) return std::nullopt;
  TemplateInstance out;
  out.name = trimmed(std::string_view(entry).substr(0, open));
  const std::string rest = trimmed(std::string_view(entry).substr(open));
  if (out.name.empty() || rest.back() != '>')
    throw std::runtime_error("entry '" + entry + "': expected NAME<ARGUMENTS>, e.g. scale<float>");
  int depth = 0;
  std::size_t from = 1;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '<' || c == '(') ++depth;
    else if (c == '>' || c == ')') --depth;
    if ((depth == 1 && c == ',') || (depth == 0 && i + 1 == rest.size())) {
      const std::string arg = trimmed(std::string_view(rest).substr(from, i - from));
      if (arg.empty()) throw std::runtime_error("entry '" + entry + "': an empty template argument");
      out.args.push_back(arg);
      from = i + 1;
    } else if (depth == 0 && i + 1 < rest.size()) {
      throw std::runtime_error("entry '" + entry + "': text after the template arguments' closing '>'");
    }
  }
  if (depth != 0) throw std::runtime_error("entry '" + entry + "': the template arguments' '<' never closes");
  return out;
}

std::vector<TemplateParameter> template_parameters(const ParsedKernel& k, const Function& f) {
  const TokenRange header = k.elements[static_cast<std::size_t>(f.header_element)].tokens;
  const std::vector<std::size_t> code = code_tokens(k, header.first, header.last);
  if (code.size() < 2 || !k.tokens[code[0]].is("template") || !k.tokens[code[1]].is("<")) return {};
  const std::size_t close = closing_angle(k, code, 1);
  if (close >= code.size()) return {};
  std::vector<TemplateParameter> out;
  for (const auto& [from, end] : angle_parts(k, code, 1, close)) {
    std::size_t eq = from;
    while (eq < end && !k.tokens[code[eq]].is("=")) ++eq;
    TemplateParameter p;
    p.type = from < eq && (k.tokens[code[from]].is("typename") || k.tokens[code[from]].is("class"));
    for (std::size_t j = from; j < eq; ++j)
      if (k.tokens[code[j]].kind == TokenKind::Identifier && !k.tokens[code[j]].is("typename") &&
          !k.tokens[code[j]].is("class"))
        p.name = k.tokens[code[j]].text;  // the last word before `=`: the parameter's name
    if (eq < end) p.default_value = text_of(k, code, eq + 1, end);
    if (!p.name.empty()) out.push_back(p);
  }
  return out;
}

std::vector<ExplicitInstance> explicit_instances(const ParsedKernel& k, const std::string& name) {
  std::vector<ExplicitInstance> out;
  for (std::size_t element = 0; element < k.elements.size(); ++element) {
    const Element& e = k.elements[element];
    if (e.kind != ElementKind::TopLevel || e.function != -1) continue;
    const std::vector<std::size_t> code = code_tokens(k, e.tokens.first, e.tokens.last);
    std::size_t i = 0;
    if (i < code.size() && k.tokens[code[i]].is("extern")) ++i;
    if (i + 1 >= code.size() || !k.tokens[code[i]].is("template") || k.tokens[code[i + 1]].is("<")) continue;
    for (std::size_t j = i + 1; j + 1 < code.size(); ++j) {
      if (!k.tokens[code[j]].is(name) || !k.tokens[code[j + 1]].is("<")) continue;
      const std::size_t close = closing_angle(k, code, j + 1);
      if (close >= code.size()) break;
      ExplicitInstance x;
      x.instance.name = name;
      for (const auto& [from, end] : angle_parts(k, code, j + 1, close)) x.instance.args.push_back(text_of(k, code, from, end));
      x.line = k.tokens[code[j]].line;
      x.element = element;
      out.push_back(std::move(x));
      break;
    }
  }
  return out;
}

std::string instantiated_source(std::string_view source, const ParsedKernel& k, const Function& f,
                                const TemplateInstance& instance) {
  const std::vector<TemplateParameter> params = template_parameters(k, f);
  if (instance.args.size() > params.size())
    throw std::runtime_error("entry '" + instance.entry() + "': '" + f.name + "' takes " +
                             std::to_string(params.size()) + " template argument" + (params.size() == 1 ? "" : "s"));
  std::vector<std::pair<std::string, std::string>> value;  // parameter -> argument
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string arg = i < instance.args.size() ? instance.args[i] : params[i].default_value;
    if (arg.empty())
      throw std::runtime_error("entry '" + instance.entry() + "': no argument for '" + f.name + "''s template parameter '" +
                               params[i].name + "', which has no default");
    value.emplace_back(params[i].name, arg);
  }
  // The function's extent: its header, then its body up to the matching '}'.
  const TokenRange header = k.elements[static_cast<std::size_t>(f.header_element)].tokens;
  std::size_t end = header.last;
  for (int depth = 0; end < k.tokens.size(); ++end) {
    if (k.tokens[end].is("{")) ++depth;
    else if (k.tokens[end].is("}") && --depth == 0) break;
  }
  const std::vector<std::size_t> code = code_tokens(k, header.first, header.last);
  const std::size_t header_close = closing_angle(k, code, 1);  // template_parameters found it
  std::string out;
  std::size_t copied = 0;  // source bytes copied so far
  const auto replace = [&](const Token& t, const std::string& with) {
    out.append(source.substr(copied, t.offset - copied));
    out += with;
    copied = t.offset + t.text.size();
  };
  for (std::size_t t = header.first; t <= end && t < k.tokens.size(); ++t) {
    const Token& tok = k.tokens[t];
    if (t <= code[header_close]) {
      if (tok.kind != TokenKind::Comment) replace(tok, std::string(tok.text.size(), ' '));  // the header, blanked
      continue;
    }
    if (tok.kind != TokenKind::Identifier) continue;
    for (const auto& [p, arg] : value)
      if (tok.text == p) replace(tok, arg);
  }
  out.append(source.substr(copied));
  return out;
}

std::string written_out_instance(std::string_view source, const std::string& file_name, const TemplateInstance& instance) {
  const Grammar g = Grammar::from_source(source, file_name);
  const ParsedKernel& k = g.parsed();
  const Function* kernel = nullptr;
  for (const Function& f : k.functions)
    if (f.is_kernel && f.name == instance.name && !template_parameters(k, f).empty()) kernel = &f;
  if (kernel == nullptr)
    throw std::runtime_error(file_name + ": no template kernel '" + instance.name + "' to write out");
  // The explicit instantiations name a template no longer there: blanked
  // first, at the same length, so the tokens' offsets hold for the rest.
  std::string blanked(source);
  for (const ExplicitInstance& x : explicit_instances(k, instance.name)) {
    const TokenRange r = k.elements[x.element].tokens;
    for (std::size_t c = k.tokens[r.first].offset; c < k.tokens[r.last].offset + k.tokens[r.last].text.size(); ++c)
      if (blanked[c] != '\n') blanked[c] = ' ';
  }
  return instantiated_source(blanked, k, *kernel, instance);
}

}  // namespace gi::grammar

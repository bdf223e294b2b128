#include "analysis/default_build.hpp"

#include <optional>
#include <regex>
#include <sstream>

#include "grammar/preprocessor_conditions.hpp"

namespace gi::analysis {
namespace {

// A conditional's state as the directives are read.
enum class Branch { Taking, Skipping, Unknown };

struct Frame {
  Branch branch = Branch::Taking;
  bool taken = false;      // a branch of this conditional was taken
  bool undecided = false;  // a branch before could not be decided
};

class Reader {
 public:
  explicit Reader(bool headers_complete) : complete_(headers_complete) {}

  // `next`: the directive after this one, if any (an include guard's #define).
  void read(const DirectiveLine& d, const DirectiveLine* next) {
    const auto directive = grammar::directive_of(d.text);
    if (!directive) return;
    const std::string& key = directive->keyword;
    const std::string& rest = directive->rest;
    if (key == "if" || key == "ifdef" || key == "ifndef") {
      std::optional<bool> c = key == "if" ? condition(rest) : defined(first_word(rest));
      // `#ifndef X_H` then `#define X_H`: an include guard, open the first time.
      if (!c && key == "ifndef" && next && !out_.undecided.count(first_word(rest)))
        if (const auto n = grammar::directive_of(next->text); n && n->keyword == "define" &&
                                                                 first_word(n->rest) == first_word(rest))
          c = false;
      Frame f;
      f.branch = !c ? Branch::Unknown : ((key == "ifndef") != *c ? Branch::Taking : Branch::Skipping);
      f.taken = f.branch == Branch::Taking;
      f.undecided = !c;
      stack_.push_back(f);
    } else if ((key == "elif" || key == "else") && !stack_.empty()) {
      Frame& f = stack_.back();
      if (f.taken) {
        f.branch = Branch::Skipping;
      } else if (f.undecided) {
        f.branch = Branch::Unknown;
      } else {
        const std::optional<bool> c = key == "else" ? std::optional<bool>(true) : condition(rest);
        f.branch = !c ? Branch::Unknown : (*c ? Branch::Taking : Branch::Skipping);
        f.taken = f.branch == Branch::Taking;
        f.undecided = !c;
      }
    } else if (key == "endif" && !stack_.empty()) {
      stack_.pop_back();
    } else if (key == "define") {
      define(rest, d);
    } else if (key == "undef") {
      const std::string name = first_word(rest);
      if (state() == Branch::Taking) out_.defined.erase(name);
      if (state() == Branch::Unknown) undecide(name, d);
    }
  }

  DefaultBuild result() { return std::move(out_); }

 private:
  bool complete_;
  std::vector<Frame> stack_;
  DefaultBuild out_;

  Branch state() const {
    Branch s = Branch::Taking;
    for (const Frame& f : stack_) {
      if (f.branch == Branch::Skipping) return Branch::Skipping;
      if (f.branch == Branch::Unknown) s = Branch::Unknown;
    }
    return s;
  }

  static std::string first_word(const std::string& text) {
    static const std::regex word(R"(^\s*([A-Za-z_]\w*))");
    std::smatch m;
    return std::regex_search(text, m, word) ? m[1].str() : "";
  }


  void undecide(const std::string& name, const DirectiveLine& d) {
    out_.defined.erase(name);
    out_.undecided.emplace(name, "'" + name + "' is defined under a condition gi cannot decide (" + directive_place(d.file, d.line) +
                                     "): which holds depends on the build");
  }

  // Whether NAME is defined here; nullopt where gi cannot tell.
  std::optional<bool> defined(const std::string& name) const {
    if (out_.defined.count(name)) return true;
    if (out_.undecided.count(name) || !complete_) return std::nullopt;
    return false;  // a name only -D could define: the default build has none
  }

  std::optional<bool> condition(std::string text) const {
    // defined(X) and defined X first, then every other name: its value, or
    // 0 where nothing defines it.
    static const std::regex defined_call(R"(\bdefined\s*(\(\s*([A-Za-z_]\w*)\s*\)|([A-Za-z_]\w*)))");
    std::string resolved;
    std::smatch m;
    while (std::regex_search(text, m, defined_call)) {
      const auto d = defined(m[2].matched ? m[2].str() : m[3].str());
      if (!d) return std::nullopt;
      resolved += m.prefix().str() + (*d ? " 1 " : " 0 ");
      text = m.suffix().str();
    }
    resolved += text;
    std::map<std::string, std::string> values;
    for (const auto& [name, def] : out_.defined)
      if (!def.function_like) values[name] = def.body.empty() ? "1" : def.body;
    static const std::regex identifier(R"(\b[A-Za-z_]\w*\b)");
    for (auto it = std::sregex_iterator(resolved.begin(), resolved.end(), identifier); it != std::sregex_iterator(); ++it) {
      const std::string name = it->str();
      if (values.count(name)) continue;
      if (!defined(name).has_value()) return std::nullopt;
      values[name] = "0";
    }
    const auto v = grammar::evaluate_condition(resolved, values);
    if (!v) return std::nullopt;
    return *v != 0;
  }

  void define(const std::string& rest, const DirectiveLine& d) {
    static const std::regex head(R"(^\s*([A-Za-z_]\w*)(\(([^)]*)\))?)");
    std::smatch m;
    if (!std::regex_search(rest, m, head)) return;
    const std::string name = m[1].str();
    if (state() == Branch::Skipping) return;
    if (state() == Branch::Unknown) {
      undecide(name, d);
      return;
    }
    MacroDefinition def;
    def.function_like = m[2].matched;
    if (def.function_like) {
      std::stringstream params(m[3].str());
      for (std::string p; std::getline(params, p, ',');) {
        p.erase(0, p.find_first_not_of(" \t"));
        p.erase(p.find_last_not_of(" \t") + 1);
        def.params.push_back(p);
      }
    }
    def.body = m.suffix().str();
    def.body.erase(0, def.body.find_first_not_of(" \t"));
    def.body.erase(def.body.find_last_not_of(" \t\r\n") + 1);
    def.line = d.line;
    def.file = d.file;
    def.conditional = !stack_.empty();
    out_.undecided.erase(name);
    out_.defined[name] = def;
  }
};

}  // namespace

std::string directive_place(const std::string& file, int line) {
  return (file.empty() ? "" : file + " ") + "line " + std::to_string(line);
}

DefaultBuild default_build(const std::vector<DirectiveLine>& lines, bool headers_complete) {
  Reader r(headers_complete);
  for (std::size_t i = 0; i < lines.size(); ++i) r.read(lines[i], i + 1 < lines.size() ? &lines[i + 1] : nullptr);
  return r.result();
}

std::vector<DirectiveLine> directive_lines(const std::string& text, const std::string& file) {
  std::vector<DirectiveLine> out;
  std::istringstream in(text);
  std::string line, joined;
  int number = 0, start = 0;
  while (std::getline(in, line)) {
    ++number;
    if (joined.empty()) start = number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    if (grammar::directive_of(joined)) out.push_back({joined, start, file});
    joined.clear();
  }
  return out;
}

}  // namespace gi::analysis

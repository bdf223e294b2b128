#pragma once
// The typed grammar of one kernel file (Langdon's representation, made
// scope-safe): every source line belongs to exactly one line rule, named after
// file and first line. Only statement, IF-condition, pragma and type rules are
// editable; declarations, loop headers, braces and function headers are fixed
// structure, so scopes stay balanced and every loop still terminates.
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "grammar/kernel_structure.hpp"
#include "grammar/local_assignments.hpp"

namespace gi::grammar {

enum class RuleKind {
  Statement,    // <_k.cu_N>        delete / replace / insert-copy
  Declaration,  // <decl_k.cu_N>    fixed; may hold a <type_k.cu_N> sub-rule
  If,           // <if_k.cu_N>      fixed; holds an <IF_k.cu_N> condition sub-rule
  For,          // <for_k.cu_N>     fixed; target of unroll edits
  Pragma,       // <pragma_k.cu_N>  `#pragma unroll [N]`: delete / replace
  Fixed,        // <fixed_k.cu_N>   everything else (braces, headers, comments, blank lines)
};

enum class SubKind { None, Condition, Type };

std::string rule_prefix(RuleKind kind);
std::string sub_prefix(SubKind kind);

struct Span {
  std::size_t offset = 0, length = 0;
  bool operator==(const Span&) const = default;
};

struct Rule {
  RuleKind kind = RuleKind::Fixed;
  int first_line = 0, last_line = 0;
  std::string text;  // the lines verbatim, joined by '\n'
  SubKind sub_kind = SubKind::None;
  Span sub;          // where the sub-rule's text sits inside `text`

  std::string sub_text() const { return text.substr(sub.offset, sub.length); }
  bool operator==(const Rule&) const = default;
};

enum class TypeClass { None, Floating, Integer };

// What the scope rules need to know about a rule; derived from the source.
struct RuleContext {
  int function = -1;       // -1: file level
  int block = 0, pos = 0;  // scope where the rule starts
  int block_after = 0, pos_after = 0;  // scope just after it
  bool anchor_ok = false;  // a copy may be inserted right after it
  bool braceless_body = false;
  // Statement rules: how many statements the rule's lines hold. Only a rule
  // of one statement may replace a brace-less body: a header takes just the
  // first statement after it, so a copied `a = 1; b = 2;` would detach `b = 2;`
  // from the header (and an `else` after it from its `if`). Found by fuzzing.
  int statements = 0;
  bool uses_break = false, uses_continue = false;
  std::vector<std::string> identifiers;  // names the movable part uses
  std::vector<std::string> reads;        // of those, the names it reads (grammar/local_assignments.hpp)
  TypeClass type_class = TypeClass::None;
  int for_element = -1;    // For rules: the loop header element
  int function_header = -1;  // Fixed rules holding a function header: the function index
  std::size_t source_offset = 0;  // where the rule's text starts in the seed
  bool host_code = false;  // a host function's lines: blank in PatchedKernel::device_source
};

class Grammar {
 public:
  // Builds the grammar of `source`; throws SourceError on malformed input.
  // `known_types`: type names its headers make (parse_kernel).
  static Grammar from_source(std::string_view source, const std::string& file_name,
                             const std::unordered_set<std::string>& known_types = {});

  const std::string& file_name() const { return file_name_; }
  const std::vector<Rule>& rules() const { return rules_; }
  const Rule& rule(std::size_t i) const { return rules_.at(i); }
  const RuleContext& context(std::size_t i) const { return contexts_.at(i); }
  const ParsedKernel& parsed() const { return parsed_; }
  // Where each local scalar first gets a value (grammar/local_assignments.hpp).
  const LocalAssignments& assignments() const { return assignments_; }
  bool final_newline() const { return final_newline_; }

  std::string rule_name(std::size_t i) const;  // <_kernel.cu_42>
  std::string sub_name(std::size_t i) const;   // <IF_kernel.cu_44>, <type_kernel.cu_12>
  // Rule index for a name (with or without <>); `is_sub` says it named the sub-rule.
  std::optional<std::size_t> find(std::string_view name, bool* is_sub = nullptr) const;

  std::string source() const;  // the seed, reproduced from the rules

  // The line rule holding parsed element `element` (grammar/kernel_structure.hpp).
  std::size_t rule_of_element(std::size_t element) const { return static_cast<std::size_t>(rule_of_element_.at(element)); }

  // Declarations visible where rule i starts: "name@line" for each.
  std::vector<std::string> visible_declarations(std::size_t i) const;

  bool operator==(const Grammar& o) const {
    return file_name_ == o.file_name_ && rules_ == o.rules_ && final_newline_ == o.final_newline_;
  }

 private:
  std::string file_name_;
  std::vector<Rule> rules_;
  std::vector<RuleContext> contexts_;
  std::vector<int> rule_of_element_;
  ParsedKernel parsed_;
  LocalAssignments assignments_;
  bool final_newline_ = true;

  friend class GrammarBuilder;
  friend class ScopeRules;
};

}  // namespace gi::grammar

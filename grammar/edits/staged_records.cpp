#include "grammar/edits/staged_records.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "analysis/expression.hpp"
#include "analysis/linear_form.hpp"
#include "analysis/loop_nest.hpp"
#include "analysis/token_ranges.hpp"
#include "grammar/edits/atomic_site_edit.hpp"

namespace gi::grammar {
namespace {

using analysis::closing;
using analysis::next_code;

// The record's components a loop `for (i = A; i < B; i++)` (or `i <= B`,
// `++i`, `i += 1`; analysis/loop_nest.hpp) with literal bounds walks,
// [A, B), with the counter's name; nothing for any other header.
struct CountedLoop {
  std::string counter;
  long long first = 0, end = 0;
};

std::optional<CountedLoop> counted_loop(const ParsedKernel& k, std::size_t header) {
  const analysis::ForLoopForm f = analysis::for_loop_form(k, header);
  if (!f.ok || f.trips < 0) return std::nullopt;
  const auto start = analysis::parse_expression(k.tokens, f.start_first, f.start_last);
  bool literal = false;
  const long long first = start ? analysis::literal_value(*start, literal) : 0;
  if (!literal) return std::nullopt;
  return CountedLoop{f.var, first, first + f.trips};
}

// Whether a token in [first, last] assigns `name` (grammar/edits/
// work_item_region.hpp, assigns) or leaves the loop early (break,
// continue, goto, return).
std::optional<std::string> loop_body_problem(const ParsedKernel& k, std::size_t first, std::size_t last, const std::string& name) {
  const auto& t = k.tokens;
  for (std::size_t i = first; i <= last && i < t.size(); ++i) {
    for (const char* exit : {"break", "continue", "goto", "return"})
      if (t[i].is(exit)) return std::string("its loop holds a ") + exit + " (line " + std::to_string(t[i].line) + ")";
    if (t[i].is(name) && assigns(k, i))
      return "its loop assigns its counter '" + name + "' (line " + std::to_string(t[i].line) + ")";
  }
  return std::nullopt;
}

}  // namespace

unsigned staged_element_bytes(const std::string& type) {
  static const std::map<std::string, unsigned> bytes = {
      {"float", 4},  {"int", 4},   {"unsigned", 4},  {"unsigned int", 4}, {"double", 8},  {"float2", 8},
      {"int2", 8},   {"uint2", 8}, {"float3", 12},   {"int3", 12},        {"uint3", 12},  {"float4", 16},
      {"int4", 16},  {"uint4", 16}, {"double2", 16}, {"long long", 8},    {"unsigned long long", 8}};
  const auto it = bytes.find(type);
  return it == bytes.end() ? 0 : it->second;
}

namespace {

// What every access of the kernel is judged against.
struct Kernel {
  const Grammar& g;
  const ParsedKernel& k;
  std::function<bool(std::size_t)> live;
  const WorkItemRegion& region;
  int fn = -1;
  std::size_t index = 0, guard = 0, body_end = 0;
  int body = 0;  // the guard's body block
};

// Where an access stands: straight in the guard's body, or straight in the
// body of a counted loop that stands straight there (so each thread past
// the guard makes it), with that loop; else why not.
struct Placement {
  bool every_thread = false;
  std::optional<CountedLoop> loop;
  std::string why;
};

Placement placement_of(const Kernel& c, std::size_t e) {
  const auto& k = c.k;
  const Element& el = k.elements[e];
  if (el.block == c.body) return {true, std::nullopt, ""};
  std::size_t h = e;
  while (h > c.guard && k.elements[h].kind != ElementKind::LoopHeader) --h;
  const Element& header = k.elements[h];
  const bool braced = h + 1 < k.elements.size() && k.elements[h + 1].kind == ElementKind::BlockOpen &&
                      k.elements[h + 1].block_after == el.block;
  const bool braceless = h + 1 == e && el.braceless_body;
  std::optional<CountedLoop> loop;
  if (header.kind == ElementKind::LoopHeader && header.is_for && header.block == c.body && (braced || braceless))
    loop = counted_loop(k, h);
  if (!loop) return {false, std::nullopt, "under a condition or in a loop other than `for (int i = A; i < B; i++)` with literal bounds"};
  const std::size_t from = braced ? k.elements[h + 1].tokens.last + 1 : el.tokens.first;
  const std::size_t to = braced ? closing(k.tokens, k.elements[h + 1].tokens.last) : el.tokens.last;
  if (auto problem = loop_body_problem(k, from, to, loop->counter)) return {false, std::nullopt, *problem};
  return {true, loop, ""};
}

// The record components an index `K * tid + c` reaches: K and [from, to].
struct Components {
  long long stride = 0, from = 0, to = 0;
  bool consecutive = false;  // `p[tid]`: a warp's accesses are consecutive already
  std::string why;           // not K * tid + c
  std::string text;          // the index as written
};

Components components_of(const Kernel& c, std::size_t open, const std::optional<CountedLoop>& loop) {
  const auto& t = c.k.tokens;
  const std::size_t close = closing(t, open);
  Components out;
  std::string parse_error;
  const auto index = analysis::parse_expression(t, open + 1, close - 1, &parse_error);
  if (!index) {
    out.why = "its index cannot be read: " + parse_error;
    return out;
  }
  out.text = analysis::expression_text(t, *index);
  const analysis::LinearForm form = analysis::linear_form(t, *index);
  bool counter = false, other = false;
  for (const auto& [text, term] : form.terms) {
    if (text == c.region.tid) out.stride = term.coefficient;
    else if (loop && text == loop->counter && term.coefficient == 1) counter = true;
    else other = true;
  }
  if (out.stride == 1 && !other && !counter && form.constant == 0) {
    out.consecutive = true;
    return out;
  }
  if (out.stride < 2 || other) {
    out.why = "the index '" + out.text + "' is not K * " + c.region.tid +
              " + c (K >= 2 a literal, c a literal or a counted loop's counter)";
    return out;
  }
  out.from = form.constant + (counter ? loop->first : 0);
  out.to = form.constant + (counter ? loop->end - 1 : 0);
  return out;
}

bool assigned_at(const std::vector<Token>& t, std::size_t close) {
  const std::size_t after = next_code(t, close + 1);
  if (after >= t.size()) return false;
  for (const char* op : {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--"})
    if (t[after].is(op)) return true;
  return false;
}

// Whether the element's own tokens hold a branch inside an expression
// (`?:`, `&&`, `||`), which could skip a read of it.
bool branches_inside(const ParsedKernel& k, const Element& el) {
  for (std::size_t i = el.tokens.first; i <= el.tokens.last; ++i)
    if (k.tokens[i].is("?") || k.tokens[i].is("&&") || k.tokens[i].is("||")) return true;
  return false;
}

// One buffer: every live use of it in the kernel judged as a store
// (`written`) or as a read. nullopt: no site and nothing to say (unused,
// consecutive already, or a read-only buffer read other ways).
std::optional<std::variant<std::string, StagedRecord>> judge(const Kernel& c, const Param& p) {
  const auto& k = c.k;
  const auto& t = k.tokens;
  const bool store = p.written;
  StagedRecord site{p.name, p.base_type, 0, staged_element_bytes(p.base_type), !store, {}};
  std::set<long long> covered;
  std::string problem;  // the first access that is no record, or a record gi cannot stage
  bool any = false, consecutive = false;
  const std::string access = store ? "a store to '" + p.name + "'" : "a read of '" + p.name + "'";
  for (std::size_t e = c.index; e < k.elements.size(); ++e) {
    const Element& el = k.elements[e];
    if (el.function != c.fn) continue;
    if (el.tokens.first > c.body_end) break;
    for (std::size_t i = el.tokens.first; i <= el.tokens.last; ++i) {
      if (!t[i].is(p.name) || !c.live(i) || (i > 0 && (t[i - 1].is(".") || t[i - 1].is("->")))) continue;
      any = true;
      const std::string where = " (line " + std::to_string(t[i].line) + ")";
      const std::size_t open = next_code(t, i + 1);
      const bool indexed = open < t.size() && t[open].is("[");
      const std::size_t close = indexed ? closing(t, open) : i;
      const std::size_t rule = c.g.rule_of_element(e);
      const bool inside = e > c.guard && rule <= c.region.last_rule;
      Placement place = inside ? placement_of(c, e) : Placement{};
      const Components comp = indexed && inside ? components_of(c, open, place.loop) : Components{};
      if (comp.consecutive) {  // p[tid]: consecutive already; the copy would not hold it
        consecutive = true;
        i = close;
        continue;
      }
      // A buffer none of whose accesses is a record is no site and nothing
      // to say about; the first problem counts once one access is a record.
      const auto fail = [&](const std::string& why) {
        if (problem.empty()) problem = why + where;
      };
      const bool record = indexed && inside && comp.why.empty() && comp.stride >= 2;
      if (record && site.components == 0) site.components = static_cast<int>(comp.stride);
      if (store) {
        // `p[INDEX] = VALUE;` as a whole statement, made by each thread past the guard.
        if (el.kind != ElementKind::Statement || i != el.tokens.first || !indexed)
          fail("'" + p.name + "' is used other than as `" + p.name + "[...] = ...;`");
        else if (!t[next_code(t, close + 1)].is("="))
          fail("'" + p.name + "' is read or updated, not only stored");
        else if (!inside)
          fail(access + " stands outside the guard");
        else if (!place.every_thread)
          fail(access + " is " + place.why);
      } else if (!indexed || !inside || (i > 0 && t[i - 1].is("&"))) {
        fail("'" + p.name + "' is also used other than as a record");
      } else if (assigned_at(t, close)) {
        return std::nullopt;  // written after all (through a cast): not read-only
      }
      if (!record) {
        if (!comp.why.empty()) fail(access + ": " + comp.why);
        i = close;
        continue;
      }
      if (site.components != comp.stride)
        fail("'" + p.name + "' is accessed as records of " + std::to_string(site.components) + " and of " +
             std::to_string(comp.stride) + " elements");
      else if (comp.from < 0 || comp.to >= comp.stride || comp.from > comp.to)
        fail(access + ", '" + p.name + "[" + comp.text + "]', reaches outside the thread's record of " +
             std::to_string(comp.stride) + " elements");
      // What every thread past the guard surely accesses: a read under
      // `?:`, `&&` or `||` may be skipped, so it covers nothing.
      if (place.every_thread && (store || !branches_inside(k, el)))
        for (long long x = comp.from; x <= comp.to; ++x) covered.insert(x);
      if (site.rules.empty() || site.rules.back() != rule) site.rules.push_back(rule);
      i = close;
    }
  }
  if (!any || site.components == 0) return std::nullopt;
  if (!problem.empty()) return problem;
  if (consecutive)
    return "'" + p.name + "' is accessed both as `" + p.name + "[" + c.region.tid + "]` and as records of " +
           std::to_string(site.components);
  if (site.element_bytes == 0) return "'" + p.name + "' has elements of type '" + p.base_type + "', whose size gi does not know";
  if (static_cast<unsigned>(site.components) * site.element_bytes > 224)
    return "'" + p.name + "' has records of " + std::to_string(site.components * site.element_bytes) +
           " bytes: a block of 1024 threads would not fit in shared memory";
  if (covered.size() != static_cast<std::size_t>(site.components))
    return std::string(store ? "the stores to '" : "the reads of '") + p.name + "' every thread makes " +
           (store ? "write " : "read ") + std::to_string(covered.size()) + " of each record's " +
           std::to_string(site.components) + " elements: the block's copy " + (store ? "out would write" : "in would read") +
           " the others";
  return site;
}

}  // namespace

StagedRecords find_staged_records(const Grammar& g, const EditContext& context) {
  StagedRecords out;
  const auto found = find_work_item_region(g, context);
  if (const auto* why = std::get_if<std::string>(&found)) {
    out.kernel_problem = "no work-item region: " + *why;
    return out;
  }
  out.region = std::get<WorkItemRegion>(found);
  const WorkItemRegion& region = out.region;
  const ParsedKernel& k = g.parsed();
  const auto& t = k.tokens;
  Kernel c{g, k, edits::live_tokens(g, context), region};
  c.fn = g.context(region.first_rule).function;
  const Function& f = k.functions[static_cast<std::size_t>(c.fn)];
  c.index = region.index_element;
  c.guard = region.guard_element;  // its body is braced (the region has none other)
  c.body = k.elements[c.guard + 1].block_after;
  c.body_end = closing(t, k.elements[static_cast<std::size_t>(f.header_element)].tokens.last);
  out.guard_rule = g.rule_of_element(c.guard);
  out.after_rule = region.last_rule + 1;
  // What the whole kernel must allow; said only where some buffer has records.
  const auto problem = [&]() -> std::string {
    if (region.bound.empty())
      return "the guard is not `if (" + region.tid + " < N)` with N unchanged inside: the block would not know how many items it has";
    // Exactly `tid < N`: a thread below N that another condition turned away
    // would leave its record unwritten (the copy-out would write it anyway),
    // or unread (the copy-in would read a record the seed never needed).
    const auto condition = analysis::parse_expression(t, k.elements[c.guard].condition->first + 1, k.elements[c.guard].condition->last - 1);
    if (!condition || condition->kind != analysis::ExprKind::Binary || condition->text != "<")
      return "the guard holds more than `" + region.tid + " < " + region.bound +
             "`: a thread it turns away below that bound would leave its record untouched";
    // (A switch path's #if branch is a block of its own, but no statement.)
    int outer = k.elements[c.guard].block;
    while (outer != f.block && outer > 0 && k.blocks[static_cast<std::size_t>(outer)].branch)
      outer = k.blocks[static_cast<std::size_t>(outer)].parent;
    if (outer != f.block) return "the guard stands inside another statement: not every thread would reach the barriers around it";
    const std::size_t head = k.elements[static_cast<std::size_t>(f.header_element)].tokens.first;
    for (std::size_t i = head; i <= region.end_token; ++i)
      if (c.live(i) && (t[i].is("return") || t[i].is("goto")))
        return "a " + t[i].text + " on line " + std::to_string(t[i].line) + " would keep threads from the barriers around the guard";
    if (out.after_rule >= g.rules().size() || g.context(out.after_rule).function != c.fn)
      return "nothing follows the guard inside the kernel";
    return "";
  };
  out.kernel_problem = problem();
  for (const Param& p : f.params) {
    if (!p.pointer) continue;
    const auto judged = judge(c, p);
    if (!judged) continue;
    if (const auto* why = std::get_if<std::string>(&*judged)) out.refusals.push_back(*why);
    else out.sites.push_back(std::get<StagedRecord>(*judged));
  }
  if (!out.kernel_problem.empty() && !out.sites.empty()) {
    std::string buffers;
    for (const StagedRecord& site : out.sites) buffers += (buffers.empty() ? "'" : ", '") + site.buffer + "'";
    out.refusals.insert(out.refusals.begin(), buffers + " written or read as records, but " + out.kernel_problem);
    out.sites.clear();
  }
  return out;
}

}  // namespace gi::grammar

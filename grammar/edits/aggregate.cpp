// aggregate: `aggregate:<_k.cu_N>=warp|block` reduces before the atomic. The
// atomic of line N (add, min, max, and, or, xor: a site, which
// analysis/aggregate_sites.hpp finds, saying why the other atomics are not)
// becomes an update of a register declared where the kernel body starts
// (at the operation's identity); where the body ends, the warp combines its
// registers with shuffles (one __reduce_*_sync for 32-bit integers) and its
// first lane makes the one atomic (=warp), or the warps' results meet in
// shared memory and the block's first thread makes it (=block). Every block
// site of the kernel shares one barrier; an atomic of the identity (a warp
// or block that met no value there) is left out, which changes nothing. A kernel's early exit `if (COND) return;` becomes
// `if (!(COND)) { ...rest of the body... }`, so every thread reaches the
// shuffles and the barrier. Partial warps (a block size that is no multiple
// of 32) shuffle among the lanes they have.
//
// `aggregate:all=warp|block` does the same at every site of the kernel at
// once. Every winner of the studies aggregated all the atomics that matter
// at one level; one edit for that lets a small search reach it without
// having to meet each site's edit separately (intensity_minmax has four).
// A site's own edit later in the patch overrides it at that site.
//
// The atomics' order and grouping change: a float sum is reassociated, which
// the seed's tolerance judges as for any variant (integer sums are exact).
#include <cstdio>
#include <map>

#include "analysis/aggregate_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

analysis::AggregateSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_aggregate_sites(g.parsed(), edits::live_tokens(g, context));
}

// The levels: gi's own combine (shuffles) per warp or per block, or the
// toolkit's (cooperative groups' reduce, a donor) in the same places.
bool is_level(const std::string& level) {
  return level == "warp" || level == "block" || level == "warp_cg" || level == "block_cg";
}
bool donor_level(const std::string& level) { return level == "warp_cg" || level == "block_cg"; }

// The lane's warp result of `v` (type t), among the lanes the warp has. A
// 32-bit integer sum, minimum or maximum (and, or, xor on unsigned) is one
// warp-wide instruction (__reduce_*_sync, sm_80 on); anything else takes
// five shuffle steps. With the donor, cooperative groups' reduce over the
// warp's threads (every one of them reaches the kernel's end), whatever
// instructions the toolkit picks for the type.
std::vector<std::string> warp_combine(const std::string& kind, const std::string& v, const std::string& t, bool donor) {
  if (donor) {
    static const std::map<std::string, std::string> op = {{"add", "plus"},    {"min", "less"},   {"max", "greater"},
                                                          {"and", "bit_and"}, {"or", "bit_or"}, {"xor", "bit_xor"}};
    return {v + " = cooperative_groups::reduce(cooperative_groups::coalesced_threads(), " + v + ", cooperative_groups::" +
            op.at(kind) + "<" + t + ">());"};
  }
  const bool is_int = t == "int", is_unsigned = t == "unsigned" || t == "unsigned int";
  if ((is_int && (kind == "add" || kind == "min" || kind == "max")) ||
      (is_unsigned && (kind == "add" || kind == "min" || kind == "max" || kind == "and" || kind == "or" || kind == "xor")))
    return {v + " = __reduce_" + kind + "_sync(gi_mask, " + v + ");"};
  return {"for (unsigned gi_step = 16u; gi_step > 0u; gi_step >>= 1) {",
          "    const " + t + " gi_other = __shfl_down_sync(gi_mask, " + v + ", gi_step);",
          "    if (gi_lane + gi_step < gi_width) { " + edits::combine(kind, v, "gi_other") + " }", "}"};
}

std::vector<std::string> indented(const std::vector<std::string>& lines, const std::string& by) {
  std::vector<std::string> out;
  for (const std::string& l : lines) out.push_back(by + l);
  return out;
}

// Where the kernel body ends, the sites' reductions go out in five parts,
// keyed so that the close rule's lines sort into them (PatchState's
// line_before is ordered by key): 0 opens a scope with each thread's lane
// numbers; 1 holds each site's warp combine (a warp site's atomic too, a
// block site's write of its warp's result to shared memory); 2 is the one
// barrier every block site shares; 3 holds each block site's combine of
// the warps' results and its atomic; 4 closes the scope. So the block sites
// of a kernel (intensity_minmax has four) wait at one barrier, not one each.
constexpr const char* kLanes = "aggregate 0";
constexpr const char* kBarrier = "aggregate 2";
constexpr const char* kEnd = "aggregate 4";

std::vector<std::string> lanes() {
  return {"{  // gi aggregate: each thread's values combined in its warp (and block) before the atomics",
          "    const unsigned gi_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
          "    const unsigned gi_threads = blockDim.x * blockDim.y * blockDim.z;",
          "    const unsigned gi_lane = gi_tid & 31u;",
          "    const unsigned gi_width = gi_threads - (gi_tid & ~31u) < 32u ? gi_threads - (gi_tid & ~31u) : 32u;",
          "    const unsigned gi_mask = gi_width == 32u ? 0xffffffffu : (1u << gi_width) - 1u;"};
}

// Part 1 of a site: its warp's combine, then the warp's atomic or the
// warp's result into shared memory.
std::vector<std::string> warp_part(const analysis::AggregateSite& site, const std::string& acc, bool block, bool donor) {
  const std::string& atomic = site.operation.function;
  std::vector<std::string> out = {"// gi aggregate: one " + atomic + " per " + (block ? "block" : "warp") +
                                  " for all its threads' values"};
  if (block) out.push_back("__shared__ " + site.type + " " + acc + "_warps[32];");
  for (const std::string& line : warp_combine(site.operation.kind, acc, site.type, donor)) out.push_back(line);
  if (block) out.push_back("if (gi_lane == 0u) " + acc + "_warps[gi_tid >> 5] = " + acc + ";");
  else out.push_back("if (gi_lane == 0u && " + acc + " != " + analysis::identity_literal(site.operation.kind, site.type) +
                     ") " + atomic + "(" + site.address + ", " + acc + ");");
  return indented(out, "    ");
}

// Part 3 of a block site, after the barrier: the first warp combines the
// warps' results and its first thread makes the block's atomic.
std::vector<std::string> block_part(const analysis::AggregateSite& site, const std::string& acc, bool donor) {
  const std::string& t = site.type;
  const std::string& kind = site.operation.kind;
  std::vector<std::string> out = {
      "if (gi_tid < 32u) {",
      "    " + t + " gi_sum = gi_tid < (gi_threads + 31u) / 32u ? " + acc + "_warps[gi_tid] : " +
          analysis::identity_literal(kind, t) + ";"};
  for (const std::string& line : warp_combine(kind, "gi_sum", t, donor)) out.push_back("    " + line);
  out.push_back("    if (gi_tid == 0u && gi_sum != " + analysis::identity_literal(kind, t) + ") " + site.operation.function +
                "(" + site.address + ", gi_sum);");
  out.push_back("}");
  return indented(out, "    ");
}

class AggregateFamily : public EditFamily {
 public:
  std::string name() const override { return "aggregate"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "aggregate:<_k.cu_N>|all=warp|block|warp_cg|block_cg (N: an atomic site; all: every site; _cg: cooperative groups' reduce)";
  }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.accept_word(kEverySite) ? kEverySite : r.rule_ref();
    r.expect('=');
    e.literal = r.one_of({"warp_cg", "block_cg", "warp", "block"});
  }
  std::string print(const Edit& e) const override { return "aggregate:" + e.target + "=" + e.literal; }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (!is_level(e.literal)) return "the level must be warp, block, warp_cg or block_cg";
    if (e.target == kEverySite) {
      if (!sites_of(g, context).sites.empty()) return std::nullopt;
      return std::string("no aggregate site in the kernel");
    }
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    if (edits::site_at(g, sites, t->index)) return std::nullopt;
    return edits::why_no_site(g, sites, t->index, e.target, name());
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    const auto sites = sites_of(g, context).sites;
    for (const auto& s : sites)
      for (const char* level : {"warp", "block", "warp_cg", "block_cg"})
        out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", 0, 0, level});
    // With one site, `all` is that site's edit again.
    if (sites.size() > 1)
      for (const char* level : {"warp", "block", "warp_cg", "block_cg"}) out.push_back(Edit{name(), kEverySite, "", 0, 0, level});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    if (e.target != kEverySite) return apply_at(g, *edits::site_at(g, sites, *g.find(e.target)), e.literal, s);
    for (const auto& site : sites.sites) apply_at(g, site, e.literal, s);
  }

 private:
  static constexpr const char* kEverySite = "all";

  void apply_at(const Grammar& g, const analysis::AggregateSite& site, const std::string& level, PatchState& s) const {
    const std::size_t rule = g.rule_of_element(site.element);
    const std::string acc = "gi_sum_" + std::to_string(g.rule(rule).first_line);
    // Each site's parts keyed by its rule, zero-padded: in source order, and
    // a later edit of the same site replaces an earlier one.
    char number[32];
    std::snprintf(number, sizeof number, "%08zu", rule);
    const std::string own = name() + " " + number;
    const std::size_t first = g.rule_of_element(site.body_first_element);
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    const auto text = [&](const std::vector<std::string>& lines) { return body_indent + edits::joined(lines, body_indent); };
    s.rules[rule].text = edits::indentation_of(g.rule(rule).text) + edits::combine_value(site, acc);
    s.rules[first].line_before_wraps[own] = site.type + " " + acc + " = " + analysis::identity_literal(site.operation.kind, site.type) + ";";
    auto& before = s.rules[close].line_before;
    const bool block = level == "block" || level == "block_cg";
    const bool donor = donor_level(level);
    before[kLanes] = text(lanes());
    before[kEnd] = text({"}"});
    before["aggregate 1 " + std::string(number)] = text(warp_part(site, acc, block, donor));
    if (block) before["aggregate 3 " + std::string(number)] = text(block_part(site, acc, donor));
    else before.erase("aggregate 3 " + std::string(number));
    // The donor's headers at the file's start (NVRTC finds them in the toolkit's include/cccl).
    if (donor) {
      s.rules[0].line_before["aggregate donor 1"] = "#include <cooperative_groups.h>  // gi aggregate: the toolkit's reduce";
      s.rules[0].line_before["aggregate donor 2"] = "#include <cooperative_groups/reduce.h>";
    }
    // The barrier while any site here reduces per block.
    const auto part3 = before.lower_bound("aggregate 3 ");
    if (part3 != before.end() && part3->first.rfind("aggregate 3 ", 0) == 0)
      before[kBarrier] = text({"    __syncthreads();  // gi aggregate: the warps' results of the block sites"});
    else
      before.erase(kBarrier);
    edits::keep_every_thread_to_the_end(g, site, s);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::AggregateFamily)

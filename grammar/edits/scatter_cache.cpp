// scatter_cache: `scatter_cache:<_k.cu_N>=W` (W: 256, 1024 or 4096 slots)
// gives each block a cache of the buffer that the atomic of line N scatters
// into (a site of privatise, analysis/privatise_sites.hpp): W slots in shared
// memory, each holding one element, tagged by its index. An update goes to
// slot index % W: into the slot if the slot holds that element or is free
// (the first thread to find it free claims it with atomicCAS on the tag),
// else to the buffer in global memory, as the seed did. Where the body ends
// the block adds each claimed slot to the buffer with one atomic.
//
// privatise copies the whole buffer, so it needs the buffer to fit in shared
// memory; a cache needs nothing known about the extent: it pays where a
// block's updates fall on few elements of a large buffer, such as voxels
// added into the nodes of a coarse grid (a block of neighbouring voxels
// touches a few dozen of its many thousand nodes). Tags only go from free to
// one index, never back, so a plain read that sees a tag other than free
// sees its final value. Indices outside [0, 2^31 - 1) skip the cache.
//
// Every atomic on the buffer goes through the cache (the analysis made sure
// they are all of one commuting operation). Caches of two buffers in one
// patch are a conflict (the tags hold indices only). With privatise or
// merge_runs at the same statements the later edit's statement is made, and
// what the earlier one added stays correct (a copy or cache nothing
// updates). Float sums are reassociated, which the seed's tolerance judges as
// for any variant.
#include <algorithm>

#include "analysis/privatise_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

const std::vector<int> kSlots = {256, 1024, 4096};

analysis::AggregateSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_privatise_sites(g.parsed(), edits::live_tokens(g, context));
}

// Where the body starts: every slot free, at the identity, before any thread updates one.
std::vector<std::string> prologue(const analysis::AggregateSite& site, const std::string& W) {
  const std::string& t = site.type;
  return {"// gi scatter_cache: a cache of " + W + " elements of " + site.buffer + " per block in shared memory",
          "__shared__ unsigned int gi_cache_tag[" + W + "];  // the element a slot holds; 0xffffffff: free",
          "__shared__ " + t + " gi_cache_value[" + W + "];",
          "const unsigned gi_cache_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
          "const unsigned gi_cache_threads = blockDim.x * blockDim.y * blockDim.z;",
          "for (unsigned gi_i = gi_cache_tid; gi_i < " + W + "u; gi_i += gi_cache_threads) {",
          "    gi_cache_tag[gi_i] = 0xffffffffu;",
          "    gi_cache_value[gi_i] = " + analysis::identity_literal(site.operation.kind, t) + ";",
          "}",
          "__syncthreads();"};
}

// Where the body ends: every update is in, the block adds each slot it claimed.
std::vector<std::string> epilogue(const analysis::AggregateSite& site, const std::string& W) {
  return {"__syncthreads();",
          "// gi scatter_cache: the block's cached elements added to " + site.buffer + ", one " +
              site.operation.function + " each",
          "for (unsigned gi_i = gi_cache_tid; gi_i < " + W + "u; gi_i += gi_cache_threads) {",
          "    if (gi_cache_tag[gi_i] != 0xffffffffu) " + site.operation.function + "(&" + site.buffer +
              "[gi_cache_tag[gi_i]], gi_cache_value[gi_i]);",
          "}"};
}

// The atomic, on the element's slot where the slot holds it or can take it.
std::string cached(const analysis::AggregateSite& site, const std::string& W, const std::string& indent) {
  const std::string& op = site.operation.function;
  return edits::joined(
      {"{",
       "    const long long gi_index = " + site.index + ";",
       "    bool gi_cached = false;",
       "    unsigned gi_slot = 0u;",
       "    if (gi_index >= 0 && gi_index < 0x7fffffffLL) {",
       "        gi_slot = (unsigned)gi_index % " + W + "u;",
       "        unsigned gi_tag = *(volatile unsigned int*)&gi_cache_tag[gi_slot];",
       "        if (gi_tag == 0xffffffffu) gi_tag = atomicCAS(&gi_cache_tag[gi_slot], 0xffffffffu, (unsigned)gi_index);",
       "        gi_cached = gi_tag == 0xffffffffu || gi_tag == (unsigned)gi_index;  // claimed now, or held already",
       "    }",
       "    if (gi_cached) " + op + "(&gi_cache_value[gi_slot], " + site.value + ");",
       "    else " + op + "(&" + site.buffer + "[gi_index], " + site.value + ");",
       "}"},
      indent);
}

class ScatterCacheFamily : public EditFamily {
 public:
  std::string name() const override { return "scatter_cache"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "scatter_cache:<_k.cu_N>=W (N: an atomic site of privatise; W: 256, 1024 or 4096 slots)";
  }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.value = r.integer();
  }
  std::string print(const Edit& e) const override { return "scatter_cache:" + e.target + "=" + std::to_string(e.value); }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (std::find(kSlots.begin(), kSlots.end(), e.value) == kSlots.end()) return "the slots must be 256, 1024 or 4096";
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    const analysis::AggregateSite* site = edits::site_at(g, sites, t->index);
    if (!site) return edits::why_no_site(g, sites, t->index, e.target, name());
    if (site->index.empty()) return "the address is not &p[i], p + i or i + p";
    return std::nullopt;
  }

  // One edit per buffer (its first site) and slot count.
  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    std::vector<std::string> buffers;
    for (const auto& s : sites_of(g, context).sites) {
      if (s.index.empty() || std::find(buffers.begin(), buffers.end(), s.buffer) != buffers.end()) continue;
      buffers.push_back(s.buffer);
      for (int slots : kSlots) out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", slots, 0, ""});
    }
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    const analysis::AggregateSite& site = *edits::site_at(g, sites, *g.find(e.target));
    const std::string W = std::to_string(e.value);
    const std::size_t first = g.rule_of_element(site.body_first_element);
    // One cache per kernel: its slots are tagged by index alone. (A later
    // cache of the same buffer replaces the earlier one whole.)
    if (const auto it = s.rules[first].line_before_wraps.find(name());
        it != s.rules[first].line_before_wraps.end() && it->second.find(" of " + site.buffer + " per block") == std::string::npos)
      s.conflicts.push_back("scatter_cache: two buffers cached in one kernel (" + site.buffer + " and another)");
    for (const auto& other : sites.sites) {
      if (other.buffer != site.buffer) continue;
      const std::size_t rule = g.rule_of_element(other.element);
      const std::string indent = edits::indentation_of(g.rule(rule).text);
      s.rules[rule].text = indent + cached(other, W, indent);
    }
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    s.rules[first].line_before_wraps[name()] = edits::joined(prologue(site, W), body_indent);
    s.rules[close].line_before[name()] = body_indent + edits::joined(epilogue(site, W), body_indent);
    edits::keep_every_thread_to_the_end(g, site, s);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::ScatterCacheFamily)

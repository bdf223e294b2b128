// warp_per_item: `warp_per_item:<for_k.cu_N>=G` (G: 4, 8, 16 or 32) lets a
// group of G lanes of a warp share one item's loop. The for loop of line N
// (a site, which analysis/warp_per_item_sites.hpp finds, saying why the
// other loops are not) is split over the lanes: lane l takes iterations
// A + l, A + l + G, ..., so neighbouring lanes read neighbouring addresses
// where the loop walks a row. Each sum the loop keeps starts from zero in
// every lane but the first (the value from before the loop counts once),
// and after the loop the lanes combine their partial sums with a butterfly
// of __shfl_xor_sync within the group: every lane then holds the totals and
// runs the rest of the kernel as the seed's thread would; only the group's
// first lane (gi_lane == 0) makes the stores after the loop.
//
// The global index line `i = blockIdx.x * blockDim.x + threadIdx.x;` becomes
// `i = blockIdx.x * (blockDim.x / G) + threadIdx.x / G;` with
// `gi_lane = threadIdx.x % G` before it, and the grid's x extent grows G
// times (LaunchEffect::group; fitness/workload/workload_plan.cpp). A group
// must not straddle two blocks: the launch refuses a block whose x extent is
// no multiple of G (spec block sizes are multiples of 32). Since the index
// is the same in a group's lanes and the kernel reads threadIdx nowhere
// else, the lanes agree on every value before the loop, on the guard or
// early exit around it, and so all reach the shuffles.
//
// Several sites may share a patch when they have the same G and none lies
// inside another (each combines its own sums); the launch has one group
// size, and a loop split inside a split loop would split its iterations
// twice. A patch with coarsen as well is rejected: both remake the global
// index. With aggregate it composes: an atomic after the loop, made by the
// group's first lane, becomes that lane's register update, and the other
// lanes add the identity.
//
// Float sums are reassociated, which the seed's tolerance judges as for any
// variant (integer sums are exact).
#include <cstdio>

#include "analysis/warp_per_item_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

analysis::WarpPerItemSites sites_of(const Grammar& g, const EditContext& context) {
  const ParsedKernel& k = g.parsed();
  const std::vector<bool> live_line = live_lines(g.source(), switch_values(g, context), g.file_name());
  return analysis::find_warp_per_item_sites(k, [&](std::size_t t) {
    const int line = k.tokens[t].line;
    return line <= 0 || static_cast<std::size_t>(line) >= live_line.size() || live_line[static_cast<std::size_t>(line)];
  });
}

const analysis::WarpPerItemSite* site_at(const Grammar& g, const analysis::WarpPerItemSites& sites, std::size_t rule) {
  for (const auto& s : sites.sites)
    if (g.rule_of_element(s.loop) == rule) return &s;
  return nullptr;
}

bool group_size(int g) { return g == 4 || g == 8 || g == 16 || g == 32; }

// The seed's text of tokens [first, last].
std::string text_of(const Grammar& g, std::size_t first, std::size_t last) {
  const auto& t = g.parsed().tokens;
  const std::string source = g.source();
  return source.substr(t[first].offset, t[last].offset + t[last].text.size() - t[first].offset);
}

// A rewrite that replaces `from` by `to` in a rule's text (once; the text
// unchanged when another edit has already removed `from`).
std::function<std::string(const std::string&)> replacing(const std::string& from, const std::string& to) {
  return [from, to](const std::string& text) {
    const std::size_t at = text.find(from);
    return at == std::string::npos ? text : text.substr(0, at) + to + text.substr(at + from.size());
  };
}

// A statement made by the group's first lane only.
std::function<std::string(const std::string&)> first_lane_only(bool braced) {
  return [braced](const std::string& text) {
    const std::size_t at = text.find_first_not_of(" \t");
    if (at == std::string::npos) return text;
    // Braced when an else follows: `if (c) if (gi_lane == 0) s; else` would give the else to the new if.
    return braced ? text.substr(0, at) + "{ if (gi_lane == 0) " + text.substr(at) + " }"
                  : text.substr(0, at) + "if (gi_lane == 0) " + text.substr(at);
  };
}

class WarpPerItemFamily : public EditFamily {
 public:
  std::string name() const override { return "warp_per_item"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override { return "warp_per_item:<for_k.cu_N>=G (N: a loop site, G: 4, 8, 16 or 32)"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.value = r.integer();
  }
  std::string print(const Edit& e) const override { return "warp_per_item:" + e.target + "=" + std::to_string(e.value); }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (!group_size(e.value)) return "the group size must be 4, 8, 16 or 32";
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown rule " + e.target;
    const auto sites = sites_of(g, context);
    if (site_at(g, sites, t->index)) return std::nullopt;
    const int line = g.rule(t->index).first_line;
    for (const std::string& refusal : sites.refusals)
      if (refusal.rfind("line " + std::to_string(line) + ":", 0) == 0) return "no warp_per_item site: " + refusal;
    if (g.rule(t->index).kind != RuleKind::For) return e.target + " is not a for loop";
    return e.target + " is a for loop outside a __global__ kernel or on a switch path the seed's default setting leaves out";
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& s : sites_of(g, context).sites)
      for (int size : context.warp_group_sizes)
        if (group_size(size)) out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.loop)), "", size, 0, ""});
    return out;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    const std::size_t rule = *g.find(e.target);
    const analysis::WarpPerItemSite& site = *site_at(g, sites, rule);
    const std::string G = std::to_string(e.value);
    const std::size_t close = g.rule_of_element(site.body_close);
    if (s.launch.group != 1 && s.launch.group != e.value)
      s.conflicts.push_back("warp_per_item edits of one patch must share the group size (" +
                            std::to_string(s.launch.group) + " and " + G + ")");
    for (const auto& [key, wrap] : s.wraps)
      if (key.rfind(name() + ":", 0) == 0 && ((wrap.first <= rule && close <= wrap.last) || (rule <= wrap.first && wrap.last <= close)))
        s.conflicts.push_back("warp_per_item loops of one patch may not lie one inside the other (lines " +
                              std::to_string(g.rule(rule).first_line) + " and " + std::to_string(g.rule(wrap.first).first_line) + ")");
    s.launch.group = e.value;

    // The index: G threads per item, and each thread's lane in its group.
    const std::size_t index_rule = g.rule_of_element(site.index_line);
    s.rules[index_rule].line_before[name()] =
        "const int gi_lane = threadIdx.x % " + G + ";  // gi warp_per_item: " + G + " lanes share each item";
    s.rules[index_rule].rewrites[name()] =
        replacing(text_of(g, site.index_first, site.index_last), "blockIdx.x * (blockDim.x / " + G + ") + threadIdx.x / " + G);

    // The loop: lane l takes iterations A + l, A + l + G, ...
    const std::string start = text_of(g, site.start_first, site.start_last);
    const std::string header = text_of(g, site.header_first, site.header_last);
    std::string split = header;
    const auto& tokens = g.parsed().tokens;
    const std::size_t step_at = tokens[site.step_first].offset - tokens[site.header_first].offset;
    split.replace(step_at, text_of(g, site.step_first, site.step_last).size(), site.variable + " += " + G);
    const std::size_t start_at = tokens[site.start_first].offset - tokens[site.header_first].offset;
    split.replace(start_at, start.size(), start == "0" ? "gi_lane" : start + " + gi_lane");
    s.rules[rule].rewrites[name()] = replacing(header, split);

    // Around it: the sums start from zero in all lanes but the first, and are combined after it.
    std::vector<std::string> open = {
        "{  // gi warp_per_item: the " + G + " lanes of a group share this loop; lane l takes iterations l, l + " + G + ", ...",
        "    const unsigned gi_first = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32 / " + G +
            " * " + G + ";  // the group's first lane in its warp",
        "    const unsigned gi_mask = (0xffffffffu >> (32 - " + G + ")) << gi_first;  // the group's lanes"};
    for (const auto& sum : site.sums) open.push_back("    if (gi_lane != 0) " + sum.name + " = 0;  // the value before the loop counts once");
    std::vector<std::string> done = {"    // the lanes' partial sums combined: every lane of the group gets the totals",
                                     "    for (int gi_step = " + std::to_string(e.value / 2) + "; gi_step > 0; gi_step /= 2) {"};
    for (const auto& sum : site.sums)
      done.push_back("        " + sum.name + " += __shfl_xor_sync(gi_mask, " + sum.name + ", gi_step, " + G + ");");
    done.push_back("    }");
    done.push_back("}");
    std::size_t first = rule;
    // A `#pragma unroll` of the seed's stays right before its loop.
    if (first > 0 && g.rule(first - 1).kind == RuleKind::Pragma) --first;
    s.wraps[name() + ":" + std::to_string(rule)] = Wrap{first, close, open, done};

    // The stores after the loop: the group's first lane makes them.
    for (std::size_t store : site.stores)
      s.rules[g.rule_of_element(store)].rewrites[name()] =
          first_lane_only(g.parsed().elements[store].followed_by_continuation);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::WarpPerItemFamily)

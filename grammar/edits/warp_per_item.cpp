// warp_per_item: `warp_per_item:<for_k.cu_N>=G` (G: 4, 8, 16 or 32) lets a
// group of G lanes of a warp share one item's loop. The for loop of line N
// (a site, which analysis/warp_per_item_sites.hpp finds, saying why the
// other loops are not) is split over the lanes: lane l takes iterations
// A + l, A + l + G, ..., so neighbouring lanes read neighbouring addresses
// where the loop walks a row. Each sum the loop keeps starts from zero in
// every lane but the first (the value from before the loop counts once),
// and after the loop the lanes combine their partial results with a butterfly
// of __shfl_xor_sync within the group: every lane then holds the totals and
// runs the rest of the kernel as the seed's thread would; only the group's
// first lane (gi_lane == 0) makes the stores after the loop.
//
// The global index line `i = blockIdx.x * blockDim.x + threadIdx.x;` becomes
// `i = blockIdx.x * (blockDim.x / G) + threadIdx.x / G;` with
// `gi_lane = threadIdx.x % G` before it, and the grid's x extent grows G
// times (LaunchEffect::group; fitness/workload/workload_plan.cpp). An index
// over blocks numbered across a 2-D grid, `(blockIdx.y * gridDim.x +
// blockIdx.x) * blockDim.x + threadIdx.x`, keeps that block number: with x
// G times wider, a row of blocks still covers the seed's row of items. A group
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
// A maximum or minimum kept by `x = f(x, e)` needs no reset (each lane's
// starts from the same value, which a maximum takes in once however often
// it meets it) and combines through f. A `while (V < E) { ... V++; }` loop
// becomes `for (V += gi_lane; V < E; V += G)` without its V++.
//
// A flag the body sets to a constant takes it in every lane if any lane set
// it. A record of a maximum or minimum (`if (ncc > result.w) {...}`) keeps
// the iteration it comes from (gi_at_R: the loop's counter, INT_MIN for the
// value from before the loop); the combine takes the partner's record when
// its score is better or, equal, when its iteration is the one the seed's
// comparison keeps (the first for > and <, the last for >= and <=). A perfect
// nest of loops is collapsed into one (gi_flat) so that a short outer loop
// (block matching's 7 displacements along z) still gives every lane work.
// Loops of a few literal iterations (fewer than 2G) are not offered.
//
// Float sums are reassociated, which the seed's tolerance judges as for any
// variant (integer sums are exact).
#include <algorithm>
#include <cstdio>

#include "analysis/warp_per_item_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

analysis::WarpPerItemSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_warp_per_item_sites(g.parsed(), edits::live_tokens(g, context));
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

// `x.y` as a name part: `x_y`.
std::string plain(std::string access) {
  std::replace(access.begin(), access.end(), '.', '_');
  return access;
}

// A perfect nest `for (int k ...) { for (int j ...) { for (int i ...) { BODY } } }`
// becomes one loop over gi_flat < span_k * span_j * span_i that the lanes
// stride over: the outer header turns into the gi_flat loop, each inner one
// into the declaration of the counters it recovers (the braces stay as plain
// blocks), i fastest as in the seed.
void collapse(const Grammar& g, const analysis::WarpPerItemSite& site, const std::string& G, std::vector<std::string>& open,
              PatchState& s) {
  const auto& nest = site.nest;
  std::string count;
  for (const auto& level : nest) {
    open.push_back("    const int gi_span_" + level.variable + " = " + level.span + ";");
    count += (count.empty() ? "" : " * ") + std::string("gi_span_") + level.variable;
  }
  std::string positive;
  for (const auto& level : nest) positive += (positive.empty() ? "" : " && ") + std::string("gi_span_") + level.variable + " > 0";
  open.push_back("    const int gi_count = " + positive + " ? " + count + " : 0;  // the nest's iterations, collapsed");
  // The counter of level l: its start plus gi_flat / (the spans inside it) % its span.
  auto recover = [&](std::size_t l) {
    std::string inner;
    for (std::size_t m = l + 1; m < nest.size(); ++m) inner += (inner.empty() ? "" : " * ") + std::string("gi_span_") + nest[m].variable;
    std::string at = inner.empty() ? "gi_flat" : "gi_flat / (" + inner + ")";
    if (l > 0) at += " % gi_span_" + nest[l].variable;
    const std::string& start = nest[l].start;
    const bool simple = start.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", 1) ==
                            std::string::npos;  // a name or number, maybe negated
    return "const int " + nest[l].variable + " = " + (simple ? start : "(" + start + ")") + " + " + at + ";";
  };
  const std::string first = text_of(g, nest[0].header_first, nest[0].header_last);
  s.rules[g.rule_of_element(nest[0].header)].rewrites["warp_per_item"] =
      replacing(first, "for (int gi_flat = gi_lane; gi_flat < gi_count; gi_flat += " + G + ")");
  for (std::size_t l = 1; l < nest.size(); ++l) {
    std::string declarations = recover(l - 1);
    if (l + 1 == nest.size()) declarations += "  " + recover(l);
    s.rules[g.rule_of_element(nest[l].header)].rewrites["warp_per_item"] =
        replacing(text_of(g, nest[l].header_first, nest[l].header_last), declarations);
  }
}

// One butterfly step of a record: each field of the partner lane's, taken
// when its score is better or, equal, from the iteration the seed's
// comparison keeps (the earlier for > and <, the later for >= and <=). A NaN
// never enters a record (no comparison holds), so only the value from before
// the loop can be one, and then all lanes hold it.
void combine_record(const analysis::LoopRecord& r, const std::string& G, std::vector<std::string>& done) {
  const std::string strict = r.op.substr(0, 1);
  const std::string tie = r.op.size() == 1 ? "<" : ">";
  const std::string mine = "gi_at_" + r.key, theirs = "gi_their_at";
  done.push_back("        {  // the record of " + r.key + ": the " + (strict == ">" ? "larger" : "smaller") + " " + r.score +
                 ", on equal ones the " + (tie == "<" ? "earlier" : "later") + " iteration");
  auto shuffle = [&](const std::string& type, const std::string& access) {
    done.push_back("            const " + type + " gi_other_" + plain(access) + " = __shfl_xor_sync(gi_mask, " + access +
                   ", gi_step, " + G + ");");
  };
  shuffle(r.score_type, r.score);
  done.push_back("            const int " + theirs + " = __shfl_xor_sync(gi_mask, " + mine + ", gi_step, " + G + ");");
  for (const auto& [access, type] : r.others) shuffle(type, access);
  const std::string other = "gi_other_" + plain(r.score);
  done.push_back("            if (" + other + " " + strict + " " + r.score + " || (" + other + " == " + r.score + " && " + theirs +
                 " " + tie + " " + mine + ")) {");
  for (const auto& [access, type] : r.others) done.push_back("                " + access + " = gi_other_" + plain(access) + ";");
  done.push_back("                " + r.score + " = " + other + ";");
  done.push_back("                " + mine + " = " + theirs + ";");
  done.push_back("            }");
  done.push_back("        }");
}

class WarpPerItemFamily : public EditFamily {
 public:
  std::string name() const override { return "warp_per_item"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "warp_per_item:<for_k.cu_N>=G (N: a loop site, a while loop's rule is <fixed_k.cu_N>; G: 4, 8, 16 or 32)";
  }

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
    if (g.rule(t->index).kind != RuleKind::For && g.rule(t->index).text.find("while") == std::string::npos)
      return e.target + " is not a for or while loop";
    return e.target + " is a for loop outside a __global__ kernel or on a switch path the seed's default setting leaves out";
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    for (const auto& s : sites_of(g, context).sites)
      for (int size : context.warp_group_sizes)
        // A loop of a few literal iterations (`for (a = 0; a < 4; a++)`) leaves most lanes idle: legal, not offered.
        if (group_size(size) && (s.literal_trips < 0 || s.literal_trips >= 2 * size)) out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.loop)), "", size, 0, ""});
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
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
        replacing(text_of(g, site.index_first, site.index_last),
                  std::string(site.index_flattened ? "(blockIdx.y * gridDim.x + blockIdx.x)" : "blockIdx.x") +
                      " * (blockDim.x / " + G + ") + threadIdx.x / " + G);

    // The loop: lane l takes iterations A + l, A + l + G, ... (of the collapsed nest: gi_flat).
    std::vector<std::string> open = {
        "{  // gi warp_per_item: the " + G + " lanes of a group share this loop; lane l takes iterations l, l + " + G + ", ...",
        "    const unsigned gi_first = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32 / " + G +
            " * " + G + ";  // the group's first lane in its warp",
        "    const unsigned gi_mask = (0xffffffffu >> (32 - " + G + ")) << gi_first;  // the group's lanes"};
    const std::string header = text_of(g, site.header_first, site.header_last);
    if (site.increment != 0) {
      // `while (COND) { ... V++; }`: `for (V += gi_lane; COND; V += G) { ... }`.
      const std::string condition = header.substr(header.find('(') + 1, header.rfind(')') - header.find('(') - 1);
      s.rules[rule].rewrites[name()] = replacing(
          header, "for (" + site.variable + " += gi_lane; " + condition + "; " + site.variable + " += " + G + ")");
      s.rules[g.rule_of_element(site.increment)].dropped = true;
    } else if (site.nest.empty()) {
      const std::string start = text_of(g, site.start_first, site.start_last);
      std::string split = header;
      const auto& tokens = g.parsed().tokens;
      const std::size_t step_at = tokens[site.step_first].offset - tokens[site.header_first].offset;
      split.replace(step_at, text_of(g, site.step_first, site.step_last).size(), site.variable + " += " + G);
      const std::size_t start_at = tokens[site.start_first].offset - tokens[site.header_first].offset;
      split.replace(start_at, start.size(), start == "0" ? "gi_lane" : start + " + gi_lane");
      s.rules[rule].rewrites[name()] = replacing(header, split);
    } else {
      collapse(g, site, G, open, s);
    }
    for (const auto& sum : site.sums) open.push_back("    if (gi_lane != 0) " + sum.name + " = 0;  // the value before the loop counts once");
    const std::string counter = site.nest.empty() ? site.variable : "gi_flat";
    for (const auto& r : site.records) {
      open.push_back("    int gi_at_" + r.key + " = -2147483647 - 1;  // the iteration " + r.key +
                     "'s record comes from: the value before the loop comes before every iteration");
      s.rules[g.rule_of_element(r.score_statement)].line_before[name()] = "gi_at_" + r.key + " = " + counter + ";";
    }
    std::vector<std::string> done = {"    // the lanes' partial results combined: every lane of the group gets the group's results",
                                     "    for (int gi_step = " + std::to_string(e.value / 2) + "; gi_step > 0; gi_step /= 2) {"};
    for (const auto& sum : site.sums)
      done.push_back("        " + sum.name + " += __shfl_xor_sync(gi_mask, " + sum.name + ", gi_step, " + G + ");");
    for (const auto& x : site.extrema)
      done.push_back("        " + x.name + " = " + x.function + "(" + x.name + ", __shfl_xor_sync(gi_mask, " + x.name +
                     ", gi_step, " + G + "));");
    for (const auto& f : site.flags)
      done.push_back("        if (__shfl_xor_sync(gi_mask, " + f.name + ", gi_step, " + G + ") == " + f.value + ") " + f.name +
                     " = " + f.value + ";  // a lane that set the flag sets it for all");
    for (const auto& r : site.records) combine_record(r, G, done);
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

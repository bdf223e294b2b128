// privatise: `privatise:<_k.cu_N>=T` gives each block a private copy of the
// buffer that the atomic of line N scatters into (a site, which
// analysis/privatise_sites.hpp finds, saying why the other atomics are not).
// The copy lives in dynamic shared memory; where the kernel body starts the
// block sets it to the operation's identity, every atomic on the buffer
// updates the copy where the copy holds its element (and the buffer in global
// memory where it does not), and where the body ends the block adds each
// element it changed to the buffer with one atomic. How many elements the
// copy holds is what the launch gives it: the buffer's element count from the
// spec when that fits kPrivateSharedLimit (grammar/patch_effect.hpp), else
// none; the kernel reads the size from %dynamic_smem_size, so a launch
// without the bytes, or a buffer longer than the spec says, is still right.
//
// A copy per block only pays when a block handles many items: with T > 0
// the work-item region (grammar/edits/work_item_region.hpp) becomes a
// grid-stride loop and the grid holds at most T threads (the launch effect
// grid_threads), so each block merges its copy once for many items. T = 0
// keeps one item per thread (for coarsen to combine with, or a kernel with
// no such region). The grid-stride loop takes the place of coarsen's loop:
// in a patch with both, the later edit's loop is the one made.
//
// One buffer is privatised per kernel (the copy takes the whole dynamic
// shared memory): a patch privatising two is refused. Float additions are
// reassociated, which the seed's tolerance judges as for any variant.
//
// `privatise:<_k.cu_N>=T,fixed` counts a float sum's copy in 32-bit fixed
// point: a float atomicAdd on shared memory is a compare-and-swap loop on
// sm_90 that retries whenever another thread wrote the word first, an
// integer one a single instruction. Offered where the spec bounds what one
// work item adds to one element (the buffer's `accumulation_bound`, b) and
// the work-item region's guard `tid < N` names the items: a block then
// handles at most ceil(N / threads in the grid) items per thread, so no
// element of its copy passes items x b, and the unit 2^-s with 2^(29 - s) >
// items x b keeps that bound in units below 2^30, half the int's range, the
// rest room for the roundings. Each addition is rounded to the
// nearest unit, so an element is off by at most half a unit per addition.
// Each changed element goes to the buffer as a float with one atomicAdd.
#include <algorithm>
#include <cstdio>
#include <regex>

#include "analysis/privatise_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
#include "grammar/edits/vector_loads.hpp"
#include "grammar/edits/work_item_region.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

// The grid caps the search tries, in threads: about a quarter, one and four
// times what a large GPU keeps resident (132 SMs x 2048 threads on an H100).
const std::vector<int> kGridThreads = {0, 65536, 262144, 1048576};

analysis::AggregateSites sites_of(const Grammar& g, const EditContext& context) {
  return analysis::find_privatise_sites(g.parsed(), edits::live_tokens(g, context));
}

unsigned element_bytes(const std::string& type) {
  return type == "double" || type == "unsigned long long int" ? 8u : 4u;
}

// The work-item region's end N (its guard `tid < N`): what a grid-stride
// loop runs to and what fixed point counts the items by; or why it has none.
struct RegionEnd {
  std::string bound;  // N as written; "" when unknown
  std::string why;    // "" when known
};
RegionEnd region_end(const Grammar& g, const EditContext& context) {
  const auto region = find_work_item_region(g, context);
  if (const auto* why = std::get_if<std::string>(&region)) return {"", *why};
  const WorkItemRegion& r = std::get<WorkItemRegion>(region);
  if (r.bound.empty()) return {"", "the guard is not `if (" + r.tid + " < N ...)` with N unchanged inside it"};
  return {r.bound, ""};
}

// Why the kernel has no work-item region with a known end, or "".
std::string no_grid_stride_loop(const Grammar& g, const EditContext& context) { return region_end(g, context).why; }

// A float sum counted in fixed point (`=T,fixed`): the copy holds ints.
bool fixed_point(const Edit& e) { return e.literal == "fixed"; }
const char* const kFixedType = "int";

// Where the body starts: the copy, zeroed, and the barrier after which any thread may update it.
std::vector<std::string> prologue(const analysis::AggregateSite& site, bool fixed) {
  const std::string t = fixed ? kFixedType : site.type;
  return {"// gi privatise: a copy of " + site.buffer + " per block in shared memory, as many elements as the launch gives it bytes for" +
              (fixed ? ", counted in fixed point" : ""),
          "extern __shared__ " + t + " gi_private[];",
          "unsigned gi_private_bytes;",
          "asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(gi_private_bytes));",
          "const unsigned gi_private_size = gi_private_bytes / sizeof(" + t + ");",
          "const unsigned gi_private_tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
          "const unsigned gi_private_threads = blockDim.x * blockDim.y * blockDim.z;",
          "for (unsigned gi_i = gi_private_tid; gi_i < gi_private_size; gi_i += gi_private_threads) gi_private[gi_i] = " +
              analysis::identity_literal(site.operation.kind, t) + ";",
          "__syncthreads();"};
}

// The fixed-point unit, after the prologue: items per thread (ceil of the
// items over the grid's threads) times the block's threads times the bound
// is the most an element reaches; in units of 2^-shift it stays below 2^30, half an int's range.
std::vector<std::string> fixed_point_unit(const std::string& items, double bound) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g", bound);
  return {"// gi privatise: no element of the copy passes the block's items times " + std::string(b) +
              " (the spec's accumulation_bound): in units of 2^-gi_shift that stays below 2^30, half an int's range",
          "const long long gi_grid_threads = (long long)gridDim.x * blockDim.x;",
          "const float gi_block_bound = (float)((((long long)(" + items + ") + gi_grid_threads - 1) / gi_grid_threads) * gi_private_threads) * " +
              std::string(b) + "f;",
          "const int gi_shift = min(29 - ilogbf(fmaxf(gi_block_bound, 1e-30f)), 100);",
          "const float gi_scale = ldexpf(1.0f, gi_shift);",
          "const float gi_unit = ldexpf(1.0f, -gi_shift);"};
}

// Where the body ends: every thread's updates are in, the block adds what it changed.
std::vector<std::string> epilogue(const analysis::AggregateSite& site, bool fixed) {
  const std::string kept = fixed ? "(float)gi_private[gi_i] * gi_unit" : "gi_private[gi_i]";
  return {"__syncthreads();",
          "// gi privatise: the block's copy added to " + site.buffer + ", one " + site.operation.function +
              " per element it changed",
          "for (unsigned gi_i = gi_private_tid; gi_i < gi_private_size; gi_i += gi_private_threads) {",
          "    if (gi_private[gi_i] != " + analysis::identity_literal(site.operation.kind, fixed ? kFixedType : site.type) +
              ") " + site.operation.function + "(&" + site.buffer + "[gi_i], " + kept + ");",
          "}"};
}

// The atomic, on the copy where the copy holds its element.
std::string scatter(const analysis::AggregateSite& site, const std::string& indent, bool fixed) {
  const std::string& op = site.operation.function;
  const std::string update = fixed ? "__float2int_rn((" + site.value + ") * gi_scale)" : site.value;
  return edits::joined({"{",
                 "    const long long gi_index = " + site.index + ";",
                 "    if (gi_index >= 0 && gi_index < (long long)gi_private_size) " + op + "(&gi_private[gi_index], " +
                     update + ");",
                 "    else " + op + "(&" + site.buffer + "[gi_index], " + site.value + ");",
                 "}"},
                indent);
}

// Why a site's buffer cannot be counted in fixed point, or "".
std::string no_fixed_point(const Grammar& g, const EditContext& context, const analysis::AggregateSites& sites,
                           const analysis::AggregateSite& site) {
  for (const auto& other : sites.sites)
    if (other.buffer == site.buffer && (other.type != "float" || other.operation.kind != "add"))
      return "fixed point counts float sums only: " + other.operation.function + " on " + other.type;
  if (context.accumulation_bounds.count(site.buffer) == 0)
    return "the spec declares no accumulation_bound for " + site.buffer + " (the most one work item adds to one element)";
  const RegionEnd region = region_end(g, context);
  if (!region.why.empty()) return "the items a block handles are not known: " + region.why;
  // The unit is worked out where the body starts: the guard's bound must be
  // made of the kernel's parameters (a local may not hold its value yet).
  const std::string& bound = region.bound;
  const auto& params = g.parsed().functions[static_cast<std::size_t>(site.function)].params;
  static const std::regex name(R"([A-Za-z_]\w*)");
  for (std::sregex_iterator it(bound.begin(), bound.end(), name), end; it != end; ++it)
    if (std::none_of(params.begin(), params.end(), [&](const Param& p) { return p.name == it->str(); }))
      return "the guard's bound " + bound + " names " + it->str() + ", which is no parameter of the kernel";
  return "";
}

class PrivatiseFamily : public EditFamily {
 public:
  std::string name() const override { return "privatise"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "privatise:<_k.cu_N>=T[,fixed] (N: an atomic site; T: grid cap in threads with a grid-stride loop, 0: none; "
           "fixed: a float sum counted in 32-bit fixed point, where the spec gives an accumulation_bound)";
  }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.value = r.integer();
    if (r.accept(',')) e.literal = r.one_of({"fixed"});
  }
  std::string print(const Edit& e) const override {
    return "privatise:" + e.target + "=" + std::to_string(e.value) + (fixed_point(e) ? ",fixed" : "");
  }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.value < 0 || (e.value > 0 && e.value < 1024)) return "the grid cap must be 0 (none) or at least 1024 threads";
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    if (!edits::site_at(g, sites, t->index)) return edits::why_no_site(g, sites, t->index, e.target, name());
    if (e.value > 0)
      if (std::string why = no_grid_stride_loop(g, context); !why.empty()) return "no grid-stride loop: " + why;
    if (fixed_point(e))
      if (std::string why = no_fixed_point(g, context, sites, *edits::site_at(g, sites, t->index)); !why.empty())
        return "no fixed point: " + why;
    return std::nullopt;
  }

  // One edit per buffer (its first site), grid cap and (where it may) count.
  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    const bool loop = no_grid_stride_loop(g, context).empty();
    std::vector<std::string> buffers;
    const analysis::AggregateSites sites = sites_of(g, context);
    for (const auto& s : sites.sites) {
      if (std::find(buffers.begin(), buffers.end(), s.buffer) != buffers.end()) continue;
      buffers.push_back(s.buffer);
      const bool fixed = no_fixed_point(g, context, sites, s).empty();
      for (int threads : kGridThreads)
        if (threads == 0 || loop)
          for (const char* counted : {"", "fixed"})
            if (*counted == '\0' || fixed)
              out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", threads, 0, counted});
    }
    return out;
  }

  std::vector<std::string> refusals(const Grammar& g, const EditContext& context) const override {
    return sites_of(g, context).refusals;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const auto sites = sites_of(g, context);
    const analysis::AggregateSite& site = *edits::site_at(g, sites, *g.find(e.target));
    if (!s.launch.private_buffer.empty() && s.launch.private_buffer != site.buffer)
      throw PatchError("privatise: " + s.launch.private_buffer + " is privatised already; one buffer per kernel");
    // Every atomic on the buffer updates the copy (the analysis made sure they are all of one operation).
    const bool fixed = fixed_point(e);
    for (const auto& other : sites.sites) {
      if (other.buffer != site.buffer) continue;
      const std::size_t rule = g.rule_of_element(other.element);
      const std::string indent = edits::indentation_of(g.rule(rule).text);
      s.rules[rule].text = indent + scatter(other, indent, fixed);
    }
    const std::size_t first = g.rule_of_element(site.body_first_element);
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    std::vector<std::string> start = prologue(site, fixed);
    if (fixed) {
      const std::vector<std::string> unit =
          fixed_point_unit(region_end(g, context).bound, context.accumulation_bounds.at(site.buffer));
      start.insert(start.end() - 1, unit.begin(), unit.end());  // before the barrier
    }
    s.rules[first].line_before_wraps[name()] = edits::joined(start, body_indent);
    s.rules[close].line_before[name()] = body_indent + edits::joined(epilogue(site, fixed), body_indent);
    edits::keep_every_thread_to_the_end(g, site, s);
    s.launch.private_buffer = site.buffer;
    s.launch.private_element_bytes = element_bytes(site.type);
    if (e.value > 0) grid_stride_loop(g, context, static_cast<unsigned>(e.value), s);
  }

 private:
  // The work-item region as a loop over the items a thread's place in the
  // grid reaches; coarsen's loop, if any, is replaced (same wrap and rewrite keys).
  static void grid_stride_loop(const Grammar& g, const EditContext& context, unsigned threads, PatchState& s) {
    const WorkItemRegion region = std::get<WorkItemRegion>(find_work_item_region(g, context));
    drop_vector_reads(region, s);
    const std::string index = region.index_text;
    const std::string strided = index + " + " + kItemCounter + " * gridDim.x * blockDim.x";
    s.rules[region.first_rule].rewrites["coarsen"] = [index, strided](const std::string& text) {
      const std::size_t at = text.find(index);
      return at == std::string::npos ? text : text.substr(0, at) + strided + text.substr(at + index.size());
    };
    s.wraps["coarsen"] = Wrap{region.first_rule, region.last_rule,
                              {"for (int " + std::string(kItemCounter) + " = 0; ; " + kItemCounter +
                               "++) {  // gi privatise: a grid-stride loop over the items"},
                              {"    if ((long long)" + region.tid + " + (long long)gridDim.x * blockDim.x >= (long long)(" +
                                   region.bound + ")) break;",
                               "}"}};
    s.launch.coarsen = 1;
    s.launch.grid_threads = threads;
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::PrivatiseFamily)

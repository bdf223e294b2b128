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
#include <algorithm>

#include "analysis/privatise_sites.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/line_edits.hpp"
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

// Why the kernel has no work-item region with a known end, or "".
std::string no_grid_stride_loop(const Grammar& g, const EditContext& context) {
  const auto region = find_work_item_region(g, context);
  if (const auto* why = std::get_if<std::string>(&region)) return *why;
  if (std::get<WorkItemRegion>(region).bound.empty())
    return "the guard is not `if (" + std::get<WorkItemRegion>(region).tid + " < N ...)` with N unchanged inside it";
  return "";
}

// Where the body starts: the copy, zeroed, and the barrier after which any thread may update it.
std::vector<std::string> prologue(const analysis::AggregateSite& site) {
  const std::string& t = site.type;
  return {"// gi privatise: a copy of " + site.buffer + " per block in shared memory, as many elements as the launch gives it bytes for",
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

// Where the body ends: every thread's updates are in, the block adds what it changed.
std::vector<std::string> epilogue(const analysis::AggregateSite& site) {
  return {"__syncthreads();",
          "// gi privatise: the block's copy added to " + site.buffer + ", one " + site.operation.function +
              " per element it changed",
          "for (unsigned gi_i = gi_private_tid; gi_i < gi_private_size; gi_i += gi_private_threads) {",
          "    if (gi_private[gi_i] != " + analysis::identity_literal(site.operation.kind, site.type) + ") " +
              site.operation.function + "(&" + site.buffer + "[gi_i], gi_private[gi_i]);",
          "}"};
}

// The atomic, on the copy where the copy holds its element.
std::string scatter(const analysis::AggregateSite& site, const std::string& indent) {
  const std::string& op = site.operation.function;
  return edits::joined({"{",
                 "    const long long gi_index = " + site.index + ";",
                 "    if (gi_index >= 0 && gi_index < (long long)gi_private_size) " + op + "(&gi_private[gi_index], " +
                     site.value + ");",
                 "    else " + op + "(&" + site.buffer + "[gi_index], " + site.value + ");",
                 "}"},
                indent);
}

class PrivatiseFamily : public EditFamily {
 public:
  std::string name() const override { return "privatise"; }
  EditGroup group() const override { return EditGroup::Transform; }
  std::string syntax() const override {
    return "privatise:<_k.cu_N>=T (N: an atomic site; T: grid cap in threads with a grid-stride loop, 0: none)";
  }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.target = r.rule_ref();
    r.expect('=');
    e.value = r.integer();
  }
  std::string print(const Edit& e) const override { return "privatise:" + e.target + "=" + std::to_string(e.value); }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.value < 0 || (e.value > 0 && e.value < 1024)) return "the grid cap must be 0 (none) or at least 1024 threads";
    const auto t = edits::named_rule(g, e.target);
    if (!t || t->sub) return "unknown statement rule " + e.target;
    const auto sites = sites_of(g, context);
    if (!edits::site_at(g, sites, t->index)) return edits::why_no_site(g, sites, t->index, e.target, name());
    if (e.value > 0)
      if (std::string why = no_grid_stride_loop(g, context); !why.empty()) return "no grid-stride loop: " + why;
    return std::nullopt;
  }

  // One edit per buffer (its first site) and grid cap.
  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    const bool loop = no_grid_stride_loop(g, context).empty();
    std::vector<std::string> buffers;
    for (const auto& s : sites_of(g, context).sites) {
      if (std::find(buffers.begin(), buffers.end(), s.buffer) != buffers.end()) continue;
      buffers.push_back(s.buffer);
      for (int threads : kGridThreads)
        if (threads == 0 || loop)
          out.push_back(Edit{name(), g.rule_name(g.rule_of_element(s.element)), "", threads, 0, ""});
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
    for (const auto& other : sites.sites) {
      if (other.buffer != site.buffer) continue;
      const std::size_t rule = g.rule_of_element(other.element);
      const std::string indent = edits::indentation_of(g.rule(rule).text);
      s.rules[rule].text = indent + scatter(other, indent);
    }
    const std::size_t first = g.rule_of_element(site.body_first_element);
    const std::size_t close = g.rule_of_element(site.body_close_element);
    const std::string body_indent = edits::indentation_of(g.rule(first).text);
    s.rules[first].line_before_wraps[name()] = edits::joined(prologue(site), body_indent);
    s.rules[close].line_before[name()] = body_indent + edits::joined(epilogue(site), body_indent);
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

// coarsen: `coarsen:K[,consecutive|strided]` makes each thread handle K work
// items (thread coarsening, Magni et al.; HIPAcc's pixels per thread) and
// shrinks the grid's x extent K times. It needs no hand-written code, so it
// applies to a user's kernel as well as the library's: any kernel whose work
// is guarded the usual way,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;
//     ...
//     if (tid < N) { ... }
// (braced, or one plain statement without braces; or an early exit
// `if (tid >= N) return;`, whose region runs to the kernel's end and whose
// returns, none in a loop or switch, become the item loop's `continue`)
// gets a loop from the index line to the end of the guard's if statement,
// with tid = (blockIdx.x * blockDim.x + threadIdx.x) * K + gi_item
// (consecutive items, the default) or
// tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x
// (strided: neighbouring threads keep neighbouring items).
// `coarsen:K,vector` takes consecutive items and loads each buffer the
// kernel reads only as `p[tid]` (grammar/edits/vector_loads.hpp) as vectors
// before the thread's loop: K / W loads of W = min(K, 4) elements (float4,
// int2, uchar4, ...) where the thread's K items are all below the guard's bound and
// the address is aligned, else element by element; inside the loop `p[tid]`
// reads the thread's copy. Only where the bound names kernel parameters.
// Not where the loop would change what the kernel means: a `return` or a
// barrier inside the region, shared memory, or blockIdx used elsewhere.
// In a seed with switches only the path its default setting compiles counts
// (the plain kernel); a patch that also switches that path off is rejected
// (grammar/patch_apply.cpp), since its loop would wrap dead code.
#include <regex>
#include <variant>

#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"
#include "grammar/edits/atomic_site_edit.hpp"
#include "grammar/edits/vector_loads.hpp"
#include "grammar/edits/work_item_region.hpp"

namespace gi::grammar {
namespace {

class CoarsenFamily : public EditFamily {
 public:
  std::string name() const override { return "coarsen"; }
  EditGroup group() const override { return EditGroup::Structural; }
  std::string syntax() const override { return "coarsen:K[,consecutive|strided|vector] (K: 2..64)"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.value = r.integer();
    e.literal = r.accept(',') ? r.one_of({"consecutive", "strided", "vector"}) : "consecutive";
  }
  std::string print(const Edit& e) const override {
    return "coarsen:" + std::to_string(e.value) + (e.literal == "consecutive" ? "" : "," + e.literal);
  }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.value < 2 || e.value > 64) return "coarsening factor must be 2..64";
    if (e.literal != "consecutive" && e.literal != "strided" && e.literal != "vector")
      return "item order must be consecutive, strided or vector";
    const auto site = find_work_item_region(g, context, true);
    if (const auto* why = std::get_if<std::string>(&site)) return "no coarsening site in " + g.file_name() + ": " + *why;
    if (e.literal == "vector") return vector_problem(g, context, std::get<WorkItemRegion>(site), e.value);
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    // A copy: a reference into the returned variant would outlive it (a
    // dangling read that gave garbage bounds when another thread reused the memory).
    const auto found = find_work_item_region(g, context, true);
    if (!std::holds_alternative<WorkItemRegion>(found)) return out;
    const WorkItemRegion& site = std::get<WorkItemRegion>(found);
    for (int k : context.coarsen_factors)
      for (const char* order : {"consecutive", "strided", "vector"})
        if (std::string(order) != "vector" || !vector_problem(g, context, site, k)) out.push_back(Edit{name(), "", "", k, 0, order});
    return out;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const WorkItemRegion site = std::get<WorkItemRegion>(find_work_item_region(g, context, true));
    const std::string k = std::to_string(e.value);
    const std::string index = site.index_text;
    const std::string coarse = e.literal == "strided"
                                   ? index + " + " + kItemCounter + " * gridDim.x * blockDim.x"
                                   : "(" + index + ") * " + k + " + " + kItemCounter;
    // The index line as it stands in the variant (another edit may have
    // replaced it: then its text has no index expression and stays).
    s.rules[site.first_rule].rewrites[name()] = [index, coarse](const std::string& text) {
      const std::size_t at = text.find(index);
      return at == std::string::npos ? text : text.substr(0, at) + coarse + text.substr(at + index.size());
    };
    // An early exit's returns end one item: the loop's next.
    if (site.early_exit) {
      static const std::regex exit_statement("(^|[^\\w])return(\\s*);");
      for (std::size_t r = site.first_rule; r <= site.last_rule; ++r)
        s.rules[r].rewrites["coarsen return"] = [](const std::string& text) {
          return std::regex_replace(text, exit_statement, "$1continue$2;");
        };
    }
    std::vector<std::string> open;
    drop_vector_reads(site, s);
    if (e.literal == "vector") open = vector_preload(g, context, site, e.value, s);
    open.push_back("for (int " + std::string(kItemCounter) + " = 0; " + kItemCounter + " < " + k + "; " + kItemCounter + "++) {");
    s.wraps["coarsen"] = Wrap{site.first_rule, site.last_rule, open, {"}"}};
    s.launch.coarsen = e.value;
    s.launch.grid_threads = 0;  // its loop replaces a grid-stride loop of privatise (same wrap)
  }

 private:
  static std::optional<std::string> vector_problem(const Grammar& g, const EditContext& context, const WorkItemRegion& site,
                                                   int k) {
    if ((k & (k - 1)) != 0) return "vector loads need a power of two items a thread";
    if (!bound_is_parameters(g, site))
      return "vector loads need the guard's bound over kernel parameters ('" + site.bound + "')";
    if (vector_loads(g, site, edits::live_tokens(g, context)).empty()) return "no buffer is read only as p[" + site.tid + "]";
    return std::nullopt;
  }

  // Each vector buffer's K items into `gi_vec_<p>[K]` before the thread's
  // loop, and `p[tid]` in the region read from there.
  static std::vector<std::string> vector_preload(const Grammar& g, const EditContext& context, const WorkItemRegion& site, int k,
                                                 PatchState& s) {
    const int w = k < 4 ? k : 4;
    const std::string K = std::to_string(k), W = std::to_string(w);
    const std::string first = "(" + site.index_text + ") * " + K;
    std::vector<std::string> out = {"const int gi_first = " + first + ";  // gi coarsen: this thread's first item"};
    for (const VectorLoad& v : vector_loads(g, site, edits::live_tokens(g, context))) {
      const std::string copy = "gi_vec_" + v.pointer;
      const std::string vec = v.vector4.substr(0, v.vector4.size() - 1) + W;
      out.push_back(v.element + " " + copy + "[" + K + "];  // gi coarsen: '" + v.pointer + "' read as " + vec);
      out.push_back("if (gi_first + " + K + " <= (" + site.bound + ") && ((unsigned long long)(" + v.pointer +
                    " + gi_first) & " + std::to_string(v.bytes * w - 1) + "ull) == 0ull) {");
      out.push_back("    #pragma unroll");
      out.push_back("    for (int gi_v = 0; gi_v < " + K + "; gi_v += " + W + ") {");
      out.push_back("        const " + vec + " gi_w = *reinterpret_cast<const " + vec + "*>(" + v.pointer + " + gi_first + gi_v);");
      std::string unpack = "        " + copy + "[gi_v] = gi_w.x; " + copy + "[gi_v + 1] = gi_w.y;";
      if (w == 4) unpack += " " + copy + "[gi_v + 2] = gi_w.z; " + copy + "[gi_v + 3] = gi_w.w;";
      out.push_back(unpack);
      out.push_back("    }");
      out.push_back("} else {");
      out.push_back("    for (int gi_v = 0; gi_v < " + K + "; gi_v++)");
      out.push_back("        if (gi_first + gi_v < (" + site.bound + ")) " + copy + "[gi_v] = " + v.pointer + "[gi_first + gi_v];");
      out.push_back("}");
      // Not a member of the same name (`s.p[tid]`, `q->p[tid]`), which the legality check let pass.
      const std::regex read("(^|[^.\\w>])" + v.pointer + "\\s*\\[\\s*" + site.tid + "\\s*\\]");
      const std::string with = "$1" + copy + "[" + kItemCounter + "]";
      for (std::size_t r = site.first_rule + 1; r <= site.last_rule; ++r) {
        auto& rewrite = s.rules[r].rewrites[kVectorReadKey + v.pointer];
        rewrite = [read, with](const std::string& text) { return std::regex_replace(text, read, with); };
      }
    }
    out.push_back("#pragma unroll");
    return out;
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::CoarsenFamily)

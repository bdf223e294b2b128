// launch_bounds: `launch_bounds:256,2` puts __launch_bounds__(256, 2) on the
// kernel: at most 256 threads per block, at least 2 blocks per SM, which
// caps the registers the compiler may use.
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"

namespace gi::grammar {
namespace {

class LaunchBoundsFamily : public EditFamily {
 public:
  std::string name() const override { return "launch_bounds"; }
  EditGroup group() const override { return EditGroup::Cuda; }
  std::string syntax() const override { return "launch_bounds:MAX_THREADS[,MIN_BLOCKS]"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.value = r.integer();
    if (r.accept(',')) e.value2 = r.integer();
  }
  std::string print(const Edit& e) const override {
    // Any min-blocks but 0 (absent) is printed, so a parsed negative value
    // (which validation rejects) prints back to itself. Found by fuzzing.
    return "launch_bounds:" + std::to_string(e.value) + (e.value2 != 0 ? "," + std::to_string(e.value2) : "");
  }

  std::optional<std::string> problem(const Grammar&, const EditContext&, const Edit& e) const override {
    if (e.value < 1 || e.value > 1024) return "launch bounds max threads must be 1..1024";
    if (e.value2 < 0 || e.value2 > 32) return "launch bounds min blocks must be 0..32";
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar&, const EditContext& context) const override {
    std::vector<Edit> out;
    for (int t : context.launch_bound_threads)
      for (int b : context.launch_bound_blocks) out.push_back(Edit{name(), "", "", t, b, ""});
    return out;
  }

  void apply(const Grammar&, const EditContext&, const Edit& e, PatchState& s) const override {
    s.header.launch_bounds = std::make_pair(e.value, e.value2);
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::LaunchBoundsFamily)

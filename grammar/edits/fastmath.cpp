// fastmath: `fastmath:<_k.cu_42>` turns the float math calls of that line
// into the fast intrinsics (expf -> __expf, ...): less accurate, so only a
// variant that still passes the tolerance survives.
#include "grammar/cuda_rewrites.hpp"
#include "grammar/edits/line_edits.hpp"

namespace gi::grammar {
namespace {

class FastMathFamily : public edits::LineRewriteFamily {
 public:
  std::string name() const override { return "fastmath"; }

 protected:
  int sites(const Grammar& g, std::size_t rule) const override {
    int n = 0;
    rewrite_fastmath(g.rule(rule).text, &n);
    return n;
  }
  std::function<std::string(const std::string&)> rewriter(const Grammar&, std::size_t) const override {
    return [](const std::string& text) { return rewrite_fastmath(text); };
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::FastMathFamily)

// ldg: `ldg:<_k.cu_42>` reads the read-only pointer parameters of that line
// through __ldg (the read-only data cache): `p[i]` -> `__ldg(&p[i])`.
#include "grammar/cuda_rewrites.hpp"
#include "grammar/edits/line_edits.hpp"

namespace gi::grammar {
namespace {

class LdgFamily : public edits::LineRewriteFamily {
 public:
  std::string name() const override { return "ldg"; }

 protected:
  int sites(const Grammar& g, std::size_t rule) const override {
    int n = 0;
    rewrite_ldg(g.rule(rule).text, ldg_parameters(g.parsed(), g.context(rule).function), &n);
    return n;
  }
  std::function<std::string(const std::string&)> rewriter(const Grammar& g, std::size_t rule) const override {
    const std::set<std::string> params = ldg_parameters(g.parsed(), g.context(rule).function);
    return [params](const std::string& text) { return rewrite_ldg(text, params); };
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::LdgFamily)

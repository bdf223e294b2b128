// coarsen: `coarsen:K[,consecutive|strided]` makes each thread handle K work
// items (thread coarsening, Magni et al.; HIPAcc's pixels per thread) and
// shrinks the grid's x extent K times. It needs no hand-written code, so it
// applies to a user's kernel as well as the library's: any kernel whose work
// is guarded the usual way,
//     tid = blockIdx.x * blockDim.x + threadIdx.x;
//     ...
//     if (tid < N) { ... }
// gets a loop from the index line to the end of the guard's if statement,
// with tid = (blockIdx.x * blockDim.x + threadIdx.x) * K + gi_item
// (consecutive items, the default) or
// tid = blockIdx.x * blockDim.x + threadIdx.x + gi_item * gridDim.x * blockDim.x
// (strided: neighbouring threads keep neighbouring items).
// Not where the loop would change what the kernel means: a `return` or a
// barrier inside the region, shared memory, or blockIdx used elsewhere.
// In a seed with switches only the path its default setting compiles counts
// (the plain kernel); a patch that also switches that path off is rejected
// (grammar/patch_apply.cpp), since its loop would wrap dead code.
#include <variant>

#include "analysis/global_index.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_text.hpp"
#include "grammar/patch_state.hpp"
#include "grammar/switches.hpp"

namespace gi::grammar {
namespace {

constexpr const char* kItem = "gi_item";

struct CoarsenSite {
  std::size_t first_rule = 0, last_rule = 0;  // the index line .. the guard's closing brace
  std::string index_text;                     // `blockIdx.x * blockDim.x + threadIdx.x` as written
};

std::size_t next_code(const ParsedKernel& k, std::size_t t) {
  while (t < k.tokens.size() && k.tokens[t].kind == TokenKind::Comment) ++t;
  return t;
}

// The token closing the bracket at `open`.
std::size_t closing(const ParsedKernel& k, std::size_t open) {
  int depth = 0;
  for (std::size_t t = open; t < k.tokens.size(); ++t) {
    if (k.tokens[t].kind != TokenKind::Punct) continue;
    const std::string& x = k.tokens[t].text;
    if (x == "(" || x == "[" || x == "{") ++depth;
    if ((x == ")" || x == "]" || x == "}") && --depth == 0) return t;
  }
  return k.tokens.size();
}

// The last token of the if statement whose condition ends at `rp`, else
// branches included; npos when a body is not braced.
std::size_t if_statement_end(const ParsedKernel& k, std::size_t rp) {
  std::size_t body = next_code(k, rp + 1);
  if (body >= k.tokens.size() || !k.tokens[body].is("{")) return std::string::npos;
  std::size_t end = closing(k, body);
  const std::size_t e = next_code(k, end + 1);
  if (e < k.tokens.size() && k.tokens[e].is("else")) {
    const std::size_t next = next_code(k, e + 1);
    if (next < k.tokens.size() && k.tokens[next].is("if")) {
      const std::size_t lp = next_code(k, next + 1);
      return if_statement_end(k, closing(k, lp));
    }
    if (next >= k.tokens.size() || !k.tokens[next].is("{")) return std::string::npos;
    end = closing(k, next);
  }
  return end;
}

// `NAME = <global index>;` (analysis/global_index.hpp): the position of NAME and of '=', or nothing.
std::optional<std::pair<std::size_t, std::size_t>> index_line(const ParsedKernel& k, const Element& e) {
  const auto line = analysis::global_index_line(k, e, false);
  if (!line) return std::nullopt;
  return std::make_pair(line->name, line->equals);
}

// The site, or why the kernel has none (the first reason met). Only lines
// the seed's default switch setting compiles are looked at.
std::variant<std::string, CoarsenSite> find_site(const Grammar& g, const EditContext& context) {
  const ParsedKernel& k = g.parsed();
  const std::vector<bool> live_line = live_lines(g.source(), switch_values(g, context), g.file_name());
  auto live = [&](const Token& t) {
    return t.line <= 0 || static_cast<std::size_t>(t.line) >= live_line.size() || live_line[static_cast<std::size_t>(t.line)];
  };
  std::optional<std::string> reason;
  auto because = [&](std::string why) {
    if (!reason) reason = std::move(why);
  };
  for (const Function& f : k.functions) {
    if (!f.is_kernel) continue;
    const std::size_t head = k.elements[static_cast<std::size_t>(f.header_element)].tokens.first;
    const std::size_t body_end = closing(k, k.elements[static_cast<std::size_t>(f.header_element)].tokens.last);
    // What rules the whole kernel out: blockIdx may only appear in index lines.
    std::vector<bool> in_index_line(k.tokens.size(), false);
    for (const Element& e : k.elements)
      if (e.function == static_cast<int>(&f - k.functions.data()) && index_line(k, e))
        for (std::size_t t = e.tokens.first; t <= e.tokens.last; ++t) in_index_line[t] = true;
    std::optional<std::string> unfit;
    for (std::size_t t = head; t <= body_end && t < k.tokens.size(); ++t) {
      const Token& x = k.tokens[t];
      if (!live(x)) continue;
      if (x.is("__shared__") || x.is("__syncthreads")) unfit = "the kernel uses shared memory or barriers";
      if (x.is(kItem)) unfit = std::string("the kernel already uses the name ") + kItem;
      if (x.is("blockIdx") && !in_index_line[t]) unfit = "blockIdx is used outside the index line";
    }
    if (unfit) {
      because(*unfit);
      continue;
    }
    for (std::size_t e = 0; e < k.elements.size(); ++e) {
      const Element& index = k.elements[e];
      if (index.function != static_cast<int>(&f - k.functions.data()) || !live(k.tokens[index.tokens.first])) continue;
      const auto parts = index_line(k, index);
      if (!parts) continue;
      const auto [name, eq] = *parts;
      const std::string tid = k.tokens[name].text;
      // The guard: the first if of the same block after it, `if (tid < ...)`.
      std::size_t h = e + 1;
      while (h < k.elements.size() && !(k.elements[h].block == index.block && k.elements[h].kind == ElementKind::IfHeader))
        ++h;
      if (h >= k.elements.size()) {
        because("no `if (" + tid + " < ...)` follows the index line");
        continue;
      }
      const Element& guard = k.elements[h];
      const std::size_t var = next_code(k, guard.condition->first + 1), less = next_code(k, var + 1);
      if (!k.tokens[var].is(tid) || !k.tokens[less].is("<")) {
        because("the first if after the index line is not `if (" + tid + " < ...)`");
        continue;
      }
      const std::size_t end = if_statement_end(k, guard.condition->last);
      if (end == std::string::npos) {
        because("the guard `if (" + tid + " < ...)` has a body without braces");
        continue;
      }
      std::optional<std::string> inside;
      for (std::size_t t = index.tokens.first; t <= end; ++t) {
        const Token& x = k.tokens[t];
        if (x.is("return")) inside = "a return inside the guarded region would end every item";
        if (x.is(tid) && t != name) {
          const std::size_t after = next_code(k, t + 1);
          if (after < k.tokens.size() && (k.tokens[after].is("=") || k.tokens[after].is("++") || k.tokens[after].is("--") ||
                                           k.tokens[after].is("+=") || k.tokens[after].is("-=")))
            inside = tid + " is assigned inside the guarded region";
        }
      }
      if (inside) {
        because(*inside);
        continue;
      }
      CoarsenSite site;
      site.first_rule = site.last_rule = g.rule_of_element(e);
      for (std::size_t x = e; x < k.elements.size() && k.elements[x].tokens.first <= end; ++x)
        site.last_rule = std::max(site.last_rule, g.rule_of_element(x));
      // The index expression as written, from the rule's text.
      const std::size_t from = k.tokens[next_code(k, eq + 1)].offset;
      const Token& last = k.tokens[index.tokens.last - 1];
      const std::size_t rule_start = g.context(site.first_rule).source_offset;
      site.index_text = g.rule(site.first_rule).text.substr(from - rule_start, last.offset + last.text.size() - from);
      return site;
    }
  }
  return reason.value_or("no index line `tid = blockIdx.x * blockDim.x + threadIdx.x;` in a kernel's body");
}

class CoarsenFamily : public EditFamily {
 public:
  std::string name() const override { return "coarsen"; }
  EditGroup group() const override { return EditGroup::Structural; }
  std::string syntax() const override { return "coarsen:K[,consecutive|strided] (K: 2..64)"; }

  void parse(ArgumentReader& r, Edit& e) const override {
    e.value = r.integer();
    e.literal = r.accept(',') ? r.one_of({"consecutive", "strided"}) : "consecutive";
  }
  std::string print(const Edit& e) const override {
    return "coarsen:" + std::to_string(e.value) + (e.literal == "strided" ? ",strided" : "");
  }

  std::optional<std::string> problem(const Grammar& g, const EditContext& context, const Edit& e) const override {
    if (e.value < 2 || e.value > 64) return "coarsening factor must be 2..64";
    if (e.literal != "consecutive" && e.literal != "strided") return "item order must be consecutive or strided";
    const auto site = find_site(g, context);
    if (const auto* why = std::get_if<std::string>(&site)) return "no coarsening site in " + g.file_name() + ": " + *why;
    return std::nullopt;
  }

  std::vector<Edit> candidates(const Grammar& g, const EditContext& context) const override {
    std::vector<Edit> out;
    if (!std::holds_alternative<CoarsenSite>(find_site(g, context))) return out;
    for (int k : context.coarsen_factors)
      for (const char* order : {"consecutive", "strided"}) out.push_back(Edit{name(), "", "", k, 0, order});
    return out;
  }

  void apply(const Grammar& g, const EditContext& context, const Edit& e, PatchState& s) const override {
    const CoarsenSite site = std::get<CoarsenSite>(find_site(g, context));
    const std::string k = std::to_string(e.value);
    const std::string index = site.index_text;
    const std::string coarse = e.literal == "strided"
                                   ? index + " + " + kItem + " * gridDim.x * blockDim.x"
                                   : "(" + index + ") * " + k + " + " + kItem;
    // The index line as it stands in the variant (another edit may have
    // replaced it: then its text has no index expression and stays).
    s.rules[site.first_rule].rewrites[name()] = [index, coarse](const std::string& text) {
      const std::size_t at = text.find(index);
      return at == std::string::npos ? text : text.substr(0, at) + coarse + text.substr(at + index.size());
    };
    s.wraps["coarsen"] = Wrap{site.first_rule, site.last_rule,
                  {"for (int " + std::string(kItem) + " = 0; " + kItem + " < " + k + "; " + kItem + "++) {"}, {"}"}};
    s.launch.coarsen = e.value;
  }
};

}  // namespace
}  // namespace gi::grammar

GI_REGISTER_EDIT_FAMILY(gi::grammar::CoarsenFamily)

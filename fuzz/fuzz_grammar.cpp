// Fuzz target: kernel source -> Grammar::from_source, then the grammar's
// invariants and patches drawn from its edit sites.
//
// Checked on every input:
// - from_source succeeds or throws SourceError (nothing else);
// - on success: source() reproduces the input, from_bnf(to_bnf(g)) == g,
//   to_json and every family's candidates() work;
// - edits chosen (from the input's hash) among the families' candidates,
//   sometimes with a field changed at random, legal or not:
//   edit_problem decides without throwing; apply_patch throws PatchError
//   exactly when edit_problem names a problem; a legal patch (one edit, and
//   all legal edits together) gives a source that tokenizes and parses again,
//   and patch_diff works on it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.hpp"
#include "grammar/edit_family.hpp"
#include "grammar/edit_rules.hpp"
#include "grammar/grammar.hpp"
#include "grammar/grammar_text.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "grammar/token.hpp"

namespace {

using namespace gi::grammar;
using gi::fuzz::check;
using gi::fuzz::Choices;
using gi::fuzz::fail;
using gi::fuzz::unexpected_exception;

std::string sub_or_rule_name(const Grammar& g, std::size_t i) {
  const std::string sub = g.sub_name(i);
  return sub.empty() ? g.rule_name(i) : sub;
}

// One edit of a random family: usually one of the family's own legal edits
// (EditFamily::candidates), sometimes with a field replaced by something
// random, so illegal edits are exercised as well.
Edit random_edit(const Grammar& g, Choices& c) {
  const std::size_t n = g.rules().size();
  static const char* const kLiterals[] = {"3", "-1", "0", "2.5", "2.5f", "1e3", "0x10", "abc", "inf",
                                          "nan", "1e999", "-0.0", "99999999999999999999", "+4", "."};
  const auto& families = edit_families();
  const EditFamily& family = *families[c.below(families.size())];
  std::vector<Edit> candidates;
  try {
    candidates = family.candidates(g, EditContext{});
  } catch (...) {
    unexpected_exception(family.name() + ".candidates");
  }
  Edit e;
  e.family = family.name();
  if (!candidates.empty()) e = candidates[c.below(candidates.size())];
  switch (candidates.empty() ? 1 + c.below(5) : c.below(8)) {
    case 1: e.target = c.coin() ? sub_or_rule_name(g, c.below(n)) : g.rule_name(c.below(n)); break;
    case 2: e.source = c.coin() ? sub_or_rule_name(g, c.below(n)) : g.rule_name(c.below(n)); break;
    case 3: e.value = static_cast<int>(c.below(1100)) - 2; break;
    case 4: e.value2 = static_cast<int>(c.below(36)) - 2; break;
    case 5: e.literal = kLiterals[c.below(std::size(kLiterals))]; break;
    default: break;
  }
  return e;
}

// A legal patch must give a source that is still a kernel gi can work on.
void check_patched(const Grammar& g, const Patch& patch) {
  std::string patched;
  try {
    patched = apply_patch(g, patch);
  } catch (const PatchError& e) {
    fail("apply_patch rejected a patch that validate_patch accepted: '" + to_string(patch) + "': " + e.what());
  } catch (...) {
    unexpected_exception("apply_patch('" + to_string(patch) + "')");
  }
  try {
    tokenize(patched, "patched.cu");
    Grammar::from_source(patched, "patched.cu");
  } catch (const SourceError& e) {
    fail("legal patch '" + to_string(patch) + "' gave a source that does not parse: " + e.what() +
         "\n--- patched source ---\n" + patched);
  } catch (...) {
    unexpected_exception("parsing the source patched by '" + to_string(patch) + "'");
  }
  try {
    patch_diff(g, patch, "kernel.cu");
  } catch (...) {
    unexpected_exception("patch_diff('" + to_string(patch) + "')");
  }
}

void check_patches(const Grammar& g, std::string_view input) {
  Choices c(input);
  Patch legal;
  const std::size_t count = 1 + c.below(6);
  for (std::size_t k = 0; k < count; ++k) {
    const Edit e = random_edit(g, c);
    const Patch single{{e}};
    std::optional<std::string> problem;
    try {
      problem = edit_problem(g, e);
    } catch (...) {
      unexpected_exception("edit_problem('" + to_string(e) + "')");
    }
    if (problem) {
      try {
        apply_patch(g, single);
        fail("apply_patch accepted '" + to_string(e) + "' which edit_problem rejects: " + *problem);
      } catch (const PatchError&) {
      } catch (...) {
        unexpected_exception("apply_patch('" + to_string(e) + "')");
      }
      continue;
    }
    check_patched(g, single);
    legal.edits.push_back(e);
  }
  if (legal.edits.size() > 1) check_patched(g, legal);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  Grammar g;
  try {
    g = Grammar::from_source(source, "kernel.cu");
  } catch (const SourceError&) {
    return 0;
  } catch (...) {
    unexpected_exception("Grammar::from_source");
  }
  check(g.source() == source, "Grammar::source() does not reproduce the input");
  try {
    const std::string bnf = to_bnf(g);
    check(from_bnf(bnf, "to_bnf") == g, "from_bnf(to_bnf(g)) differs from g");
  } catch (const SourceError& e) {
    fail(std::string("from_bnf rejected to_bnf's own output: ") + e.what());
  } catch (...) {
    unexpected_exception("to_bnf/from_bnf round trip");
  }
  // to_json lists every rule's visible declarations, which grows with the
  // square of the file; small inputs cover its code paths.
  if (size <= 2048) {
    try {
      // As `gi grammar --json` prints it: source files need not be UTF-8.
      to_json(g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    } catch (...) {
      unexpected_exception("to_json");
    }
  }
  check_patches(g, source);
  return 0;
}

// Fuzz target: patch text -> parse_patch, then validate/apply on fixed seeds.
//
// Checked on every input:
// - parse_patch succeeds or throws SourceError (nothing else);
// - on success parse_patch(to_string(p)) == p;
// - against the convolution_x seed and tests/data/sample.cu (both named
//   kernel.cu, embedded at build time): validate_patch and apply_patch throw
//   nothing but PatchError, apply_patch accepts what validate_patch accepts,
//   and the patched source tokenizes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "embedded_seeds.hpp"
#include "fuzz/fuzz_check.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/source_error.hpp"
#include "grammar/token.hpp"

using namespace gi::grammar;
using gi::fuzz::check;
using gi::fuzz::fail;
using gi::fuzz::unexpected_exception;

namespace {

const Grammar& seed_grammar(int which) {
  static const Grammar convolution = Grammar::from_source(gi::fuzz::kConvolutionSeed, "kernel.cu");
  static const Grammar sample = Grammar::from_source(gi::fuzz::kSampleSeed, "kernel.cu");
  return which == 0 ? convolution : sample;
}

void check_on(const Grammar& g, const Patch& p, const std::string& text) {
  bool valid = false;
  try {
    validate_patch(g, p);
    valid = true;
  } catch (const PatchError&) {
  } catch (...) {
    unexpected_exception("validate_patch('" + text + "')");
  }
  std::string patched;
  try {
    patched = apply_patch(g, p);
    check(valid, "apply_patch accepted a patch validate_patch rejects: '" + text + "'");
  } catch (const PatchError& e) {
    check(!valid, "apply_patch rejected a patch validate_patch accepts: '" + text + "': " + e.what());
    return;
  } catch (...) {
    unexpected_exception("apply_patch('" + text + "')");
  }
  try {
    tokenize(patched, "patched.cu");
  } catch (const SourceError& e) {
    fail("valid patch '" + text + "' gave a source that does not tokenize: " + e.what());
  } catch (...) {
    unexpected_exception("tokenize(patched source)");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Patch p;
  try {
    p = parse_patch(text, "fuzz.patch");
  } catch (const SourceError&) {
    return 0;
  } catch (...) {
    unexpected_exception("parse_patch");
  }
  const std::string printed = to_string(p);
  try {
    check(parse_patch(printed, "to_string") == p, "parse_patch(to_string(p)) differs from p: '" + printed + "'");
  } catch (const SourceError& e) {
    fail("parse_patch rejected to_string's own output '" + printed + "': " + e.what());
  } catch (...) {
    unexpected_exception("parse_patch(to_string(p))");
  }
  check_on(seed_grammar(0), p, printed);
  check_on(seed_grammar(1), p, printed);
  return 0;
}

// Fuzz target: BNF text -> from_bnf.
//
// Checked on every input: from_bnf succeeds or throws SourceError (nothing
// else); on success to_bnf(g) parses back to the same grammar, and printing
// that again gives the same text (the printed form is canonical).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.hpp"
#include "grammar/grammar.hpp"
#include "grammar/grammar_text.hpp"
#include "grammar/source_error.hpp"

using namespace gi::grammar;
using gi::fuzz::check;
using gi::fuzz::fail;
using gi::fuzz::unexpected_exception;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Grammar g;
  try {
    g = from_bnf(text, "fuzz.bnf");
  } catch (const SourceError&) {
    return 0;
  } catch (...) {
    unexpected_exception("from_bnf");
  }
  const std::string printed = to_bnf(g);
  try {
    const Grammar again = from_bnf(printed, "to_bnf");
    check(again == g, "from_bnf(to_bnf(g)) differs from g");
    check(to_bnf(again) == printed, "to_bnf is not stable across a round trip");
  } catch (const SourceError& e) {
    fail(std::string("from_bnf rejected to_bnf's own output: ") + e.what() + "\n--- to_bnf ---\n" + printed);
  } catch (...) {
    unexpected_exception("from_bnf(to_bnf(g))");
  }
  return 0;
}

#pragma once
// Branch coverage of a kernel's training data. A GI search keeps whatever
// passes its tests: a branch direction the training workloads never take (a
// border, the padding, a masked voxel) can be deleted by an edit that still
// passes training. To see which directions the training set takes, the seed
// is rewritten source to source so that every branch direction counts how
// often it ran:
//   - every `if` (its else is the false direction),
//   - every condition of `?:`,
//   - every operand of a chain of `&&` / `||` (in any expression: if and
//     loop conditions, assignments, returns, initialisers),
// in every function of the file, device helpers included.
//
// A condition or operand `c` becomes `gi_branch(ID, (c))`, which evaluates `c`
// once and returns it as a bool, so meaning and short-circuiting stay as they
// were. gi_branch adds to the module global
//   __device__ unsigned long long gi_branch_counts[2 * sites]
// ([2*ID] the false direction, [2*ID+1] the true one) with one atomicAdd per
// warp and direction, among the lanes that are active at that call site only
// (__activemask, __match_any_sync, __ballot_sync): a coverage run of a
// two-million-thread kernel with loops stays fast and never waits for a lane
// that is not there. The instrumented source is for coverage runs only; it
// is never timed or shipped.
//
// A site is named `<kind>@<line>:<column>` after its first token (1-based,
// as in the seed's kernel.cu): `if` at the `if` keyword, `op` at an operand's
// first token, `?:` at the condition's first token. `if (X >= 0 && X < n)`
// with the `if` at line 35, column 13 gives if@35:13, op@35:17 and op@35:27.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gi::fitness {

// The module global the instrumented source defines (extern "C", so its name
// is not mangled), read by GpuRunner::run_counted.
inline constexpr const char* kBranchCounterSymbol = "gi_branch_counts";

enum class BranchKind { If, Operand, Ternary };
std::string to_string(BranchKind kind);  // "if", "op", "?:"

struct BranchSite {
  std::string key;       // "if@35:13"
  BranchKind kind = BranchKind::If;
  int line = 0, column = 0;
  std::string text;      // the condition or operand as written (whitespace runs as one space)
  std::string function;  // the function it stands in
};

struct BranchInstrumentation {
  std::string source;              // the instrumented source
  std::vector<BranchSite> sites;   // site i counts at gi_branch_counts[2i] (false) and [2i+1] (true)
  // Elements of gi_branch_counts to read back: 2 * sites (at least 2, so the
  // array exists even without a site).
  std::size_t counters() const { return sites.empty() ? 2 : 2 * sites.size(); }
};

// Throws grammar::SourceError for source that does not parse, or for a
// branch that cannot be rewritten safely (a declaration as an `if`
// condition, a preprocessor line inside a condition), naming line and column.
// `entry`: only the kernel of that name and the functions it calls (directly
// or through others) get counters, so the other kernels of a file a user
// brought (which the seed's workloads never launch) do not count as untaken;
// empty: every function.
BranchInstrumentation instrument_branches(std::string_view source, const std::string& file_name = "kernel.cu",
                                          const std::string& entry = "");

// A branch key split into its parts; nullopt unless `key` has the form
// <if|op|?:>@<line>:<column> with positive numbers.
struct BranchKey {
  BranchKind kind = BranchKind::If;
  int line = 0, column = 0;
};
std::optional<BranchKey> parse_branch_key(std::string_view key);

}  // namespace gi::fitness

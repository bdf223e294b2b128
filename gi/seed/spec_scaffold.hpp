#pragma once
// `gi init`: a seed folder's spec.json drafted from a kernel's signature,
// for a user's own kernel. Pointers to const, and pointers the kernel never
// writes through, become inputs, other pointers outputs; scalars take their value from the workload variable of
// the same name. Inputs are drawn by the "random" generator
// (fitness/workload/random_workload.hpp), and the seed is its own
// reference (gi/evaluate/seed_reference.hpp). Every field that only the user
// can decide (element counts, the grid, the sizes, the range of an integer
// input) holds a string starting with kFillMarker, and the spec does not
// load until none is left.
//
// With the problem size (`gi init K.cu --size n=4000000`) the rest follows
// from the kernel (analysis/parameter_use.hpp): element counts from how each
// pointer is indexed and guarded, roles from reads, writes and atomics (an
// atomic's buffer is inout and starts at the operation's identity), the
// grid and work item from the guard on the global index, min_bytes, a
// tolerance that fits the kernel's outputs, and workloads: the timed one at
// the size given, a small check at sizes that are no multiple of any block
// size, and five held-out ones that vary the shape and together reach the
// 16 M values validation asks for. Every inferred field is listed with its
// evidence; FILL stays only where the kernel does not say.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/file_symbols.hpp"
#include "gi/seed/init_sizes.hpp"

namespace gi {

struct SpecScaffold {
  std::string entry;
  nlohmann::ordered_json spec;  // in the order a reader wants it
  std::vector<std::string> notes;  // what the user should know (other kernels, types gi cannot generate)
  std::vector<std::string> inferred;  // "field: value (evidence)" for each field read from the kernel
};

// Throws std::runtime_error naming the file: no kernel, an unknown --entry,
// several kernels and no --entry (the message lists them), a --size or
// --like naming no parameter. `headers`: the macros of the local headers the
// file includes (gi/seed/included_headers.hpp).
SpecScaffold scaffold_spec(std::string_view source, const std::string& file_name,
                           const std::optional<std::string>& entry, const std::string& family,
                           const InitSizes& given = {}, const analysis::IncludedHeaders& headers = {});

}  // namespace gi

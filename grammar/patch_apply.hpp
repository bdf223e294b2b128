#pragma once
// Applying a patch to the seed: the patched source, its launch effect, and
// the unified diff a developer applies with `patch -p1`.
#include <stdexcept>
#include <string>

#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"
#include "grammar/patch_effect.hpp"

namespace gi::grammar {

class PatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws PatchError naming the edit (position and text) and why it is
// illegal, or the switch setting the seed does not allow.
void validate_patch(const Grammar& g, const Patch& patch, const EditContext& context = {});

struct PatchedKernel {
  std::string source;
  // What NVRTC compiles: `source` with every host function's lines blank
  // (the same line count, so NVRTC's line numbers are the source's).
  std::string device_source;
  LaunchEffect launch;
};

// The seed with the patch applied (validated first), and what it does to the launch.
PatchedKernel patch_kernel(const Grammar& g, const Patch& patch, const EditContext& context = {});
// Only the source.
std::string apply_patch(const Grammar& g, const Patch& patch, const EditContext& context = {});

// Unified diff of the patched source against the seed; `path` is the seed's
// path relative to the directory `patch -p1` runs in.
std::string patch_diff(const Grammar& g, const Patch& patch, const std::string& path, const EditContext& context = {});

}  // namespace gi::grammar

#pragma once
// Applying a patch to the seed: the patched source, and the unified diff a
// developer applies with `patch -p1`.
#include <stdexcept>
#include <string>

#include "grammar/grammar.hpp"
#include "grammar/patch.hpp"

namespace gi::grammar {

class PatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws PatchError naming the edit (position and text) and why it is illegal.
void validate_patch(const Grammar& g, const Patch& patch);

// The seed with the patch applied (validated first).
std::string apply_patch(const Grammar& g, const Patch& patch);

// Unified diff of the patched source against the seed; `path` is the seed's
// path relative to the directory `patch -p1` runs in.
std::string patch_diff(const Grammar& g, const Patch& patch, const std::string& path);

}  // namespace gi::grammar

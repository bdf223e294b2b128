#pragma once
// Patch files as gi writes and reads them: pinned to the seed they were made
// against (the SHA-256 of its kernel.cu), so a patch is never silently applied
// to another seed (grammar/patch.hpp, `@seed=`).
#include <filesystem>
#include <string>

#include "gi/seed/seed.hpp"
#include "grammar/patch.hpp"

namespace gi {

// Reads a patch file for `seed`; throws std::runtime_error naming the file
// when it is pinned to another seed, SourceError when it does not parse.
// An unpinned (hand-written) file is accepted.
grammar::Patch read_patch_for(const Seed& seed, const std::filesystem::path& file);
// The same for patch text already read (`origin` names it in messages).
grammar::Patch parse_patch_for(const Seed& seed, const std::string& text, const std::string& origin);

// The file text of `patch`, pinned to `seed`.
std::string patch_file_for(const Seed& seed, const grammar::Patch& patch);

}  // namespace gi

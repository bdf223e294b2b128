#include "gi/seed/patch_files.hpp"

#include <stdexcept>

namespace gi {

grammar::Patch parse_patch_for(const Seed& seed, const std::string& text, const std::string& origin) {
  grammar::PatchFile file = grammar::parse_patch_file(text, origin);
  if (file.seed_sha256 && *file.seed_sha256 != seed.sha256)
    throw std::runtime_error(origin + ": this patch was made for a seed whose kernel.cu has SHA-256 " +
                             *file.seed_sha256 + ", but " + seed.display_path + " has " + seed.sha256 +
                             ": it would not mean the same edits here");
  return std::move(file.patch);
}

grammar::Patch read_patch_for(const Seed& seed, const std::filesystem::path& file) {
  return parse_patch_for(seed, read_text_file(file), file.string());
}

std::string patch_file_for(const Seed& seed, const grammar::Patch& patch) {
  return grammar::patch_file_text(patch, seed.sha256);
}

}  // namespace gi

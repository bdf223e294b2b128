#pragma once
// A seed folder (seeds/<family>/<kernel>/): the kernel source, its grammar,
// and what edits need from its spec.json (its switches).
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gi/seed/seed_build.hpp"
#include "grammar/edit_context.hpp"
#include "grammar/grammar.hpp"

namespace gi {

struct Seed {
  std::filesystem::path dir;
  std::string display_path;  // kernel.cu's path as the user named it, for diffs
  std::string source;
  grammar::Grammar grammar;
  std::optional<nlohmann::json> spec;  // spec.json, when the seed has one
  // The switches its spec declares (none without a spec); callers add the
  // workload constants and draw settings they need.
  grammar::EditContext context;
  std::string sha256;  // of kernel.cu: what patches and checkpoints are pinned to
  SeedBuild build;     // include folders, headers and NVRTC options of every compile
};

// Accepts a seed folder or a .cu file; throws std::runtime_error naming the
// path and what was expected, or SourceError for a malformed kernel.
Seed load_seed(const std::filesystem::path& path);

// More include folders, NVRTC options and pre-includes than the spec gives
// (the command line's); the headers are looked for again. Throws
// std::runtime_error naming a folder or pre-include that is not there.
void add_to_build(Seed& seed, const std::vector<std::filesystem::path>& include_dirs,
                  const std::vector<std::string>& nvrtc_options, const std::vector<std::string>& pre_includes = {});

std::string read_text_file(const std::filesystem::path& path);

}  // namespace gi

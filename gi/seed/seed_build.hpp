#pragma once
// How a seed compiles the way its user's build does: the folders its
// includes come from and extra NVRTC options (spec.json's "include_dirs" and
// "nvrtc_options", or `--include-dir` / `--nvrtc-option`), and the headers
// those includes name, read once and handed to NVRTC with their text. The
// headers' text is part of every compile's cache key (fitness/compile), so
// an edited header is never answered from the cache; and NVRTC never reads
// from the working directory, where a quoted include would otherwise be
// looked for (found trying gi on real code).
#include <filesystem>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct SeedBuild {
  std::vector<std::filesystem::path> include_dirs;  // absolute; the kernel's own folder first
  std::vector<std::string> nvrtc_options;           // after gi's base options, before a tuning's
  // Files the user's build includes before the kernel file (spec.json's
  // "pre_includes", `--pre-include`): a kernel file that a host file
  // #includes after its own headers (`#include "define.c"` then
  // `#include "kernel.cu"`, as in Rodinia) needs their names. Looked for
  // like a quoted include: the seed's folder, then include_dirs.
  std::vector<std::string> pre_includes;
  // (name as an #include writes it, text), for every header found.
  std::vector<std::pair<std::string, std::string>> headers;

  // What every compile passes after gi's base options: nvrtc_options, then
  // NVRTC's --pre-include=NAME for each pre-include.
  std::vector<std::string> compile_options() const;
};

// The #include lines of `source` that name a file under its own folder
// (quoted includes) or under `include_dirs` (either form), and those of the
// headers found, transitively. A standard header (either form) found
// neither there nor in the toolkit's include folder gets a stand-in that
// starts with the comment kSetAsideHeader (<stdio.h>, <iostream>: host
// code's, set aside; <stdint.h> and the like keep their types:
// gi/seed/system_header_stand_ins.hpp), and so do those the toolkit's own
// headers name (cuda.h: <stdlib.h>, <stdint.h>); any other include found
// nowhere is left to NVRTC, whose error names it. Throws std::runtime_error
// naming the file when one cannot be read, or an include chain deeper than 64.
extern const char* const kSetAsideHeader;

std::vector<std::pair<std::string, std::string>> find_headers(const std::string& source,
                                                              const std::filesystem::path& source_dir,
                                                              const std::vector<std::filesystem::path>& include_dirs);

// find_headers for `source` and the build's pre-includes, into build.headers,
// each project header as NVRTC should see it: its host code set aside
// (grammar::header_device_view). Returns the type names those headers make
// (grammar::header_type_names), for the kernel's grammar: `fp x = 0;` is a
// declaration when a pre-include says `#define fp float`. Throws
// std::runtime_error naming a pre-include found nowhere.
std::unordered_set<std::string> find_build_headers(SeedBuild& build, const std::string& source,
                                                   const std::filesystem::path& source_dir);

// spec.json's "include_dirs" (relative to the seed folder), "nvrtc_options"
// and "pre_includes"; throws std::runtime_error naming `spec_name` and the field.
SeedBuild read_seed_build(const nlohmann::json& spec, const std::string& spec_name, const std::filesystem::path& seed_dir);

}  // namespace gi

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
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi {

struct SeedBuild {
  std::vector<std::filesystem::path> include_dirs;  // absolute; the kernel's own folder first
  std::vector<std::string> nvrtc_options;           // after gi's base options, before a tuning's
  // (name as an #include writes it, text), for every header found.
  std::vector<std::pair<std::string, std::string>> headers;
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

// spec.json's "include_dirs" (relative to the seed folder) and
// "nvrtc_options"; throws std::runtime_error naming `spec_name` and the field.
SeedBuild read_seed_build(const nlohmann::json& spec, const std::string& spec_name, const std::filesystem::path& seed_dir);

}  // namespace gi

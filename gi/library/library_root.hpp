#pragma once
// Where gi's library is: the seed kernels (seeds/), the published evolved
// kernels (evolved/) and the report scripts (scripts/report/). One resolver
// for every command, so that a gi copied or installed elsewhere finds the
// same library wherever it is run from, and never through a path baked in
// at build time (a build folder that has moved or gone):
//   1. the environment variable GI_LIBRARY (the folder holding seeds/);
//   2. beside the executable: <prefix>/share/gi for <prefix>/bin/gi (what
//      `cmake --install` lays out), else the nearest folder above the
//      executable that holds seeds/ and scripts/report/ (a checkout with its
//      build folder, or a binary carried into a checkout).
// A command's own --seeds option, where it has one, overrides the seeds
// folder only.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gi {

struct Library {
  std::filesystem::path root;
  std::string found_by;  // "GI_LIBRARY", "installed beside the executable", "a checkout above the executable"

  std::filesystem::path seeds() const { return root / "seeds"; }
  std::filesystem::path evolved() const { return root / "evolved"; }
  std::filesystem::path report_script() const { return root / "scripts" / "report" / "gi_report.py"; }
};

// The search above for a given executable and GI_LIBRARY value (nullptr:
// unset); nullopt when nothing is found, with every place looked at in
// `looked_at`. Throws when GI_LIBRARY names a folder without seeds/: a
// setting that is wrong is an error, not a reason to look elsewhere.
std::optional<Library> find_library(const std::filesystem::path& executable, const char* gi_library,
                                    std::vector<std::string>* looked_at = nullptr);

// This process's library (its executable, the environment); throws naming
// every place looked at and how to set GI_LIBRARY when there is none.
const Library& library();

// A SEED_DIR argument: the folder as given when it exists, else the library's
// seed of that name ("bspline/deformation_field"), else the argument as it
// is (load_seed then says what is missing).
std::filesystem::path resolve_seed_dir(const std::string& argument);

}  // namespace gi

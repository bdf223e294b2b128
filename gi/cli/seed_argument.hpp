#pragma once
// SEED_DIR arguments: a folder as given, or a seed of gi's library by name
// ("bspline/deformation_field", also "seeds/bspline/deformation_field" from
// anywhere), through gi/library/library_root.hpp.
#include <CLI/CLI.hpp>

#include "gi/library/library_root.hpp"

namespace gi::cli {

// For an option or positional: ->transform(library_seed())
inline CLI::Validator library_seed() {
  return CLI::Validator(
      [](std::string& argument) {
        argument = resolve_seed_dir(argument).string();
        return std::string();
      },
      "", "library seed");
}

}  // namespace gi::cli

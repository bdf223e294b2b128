#pragma once
// The local headers a user's kernel file includes (`#include "x.h"`), read
// for their macros so that gi init sees the block size or the index macro
// (`#define IDX2C(i, j, ld) ...`) a header defines. Looked up next to the
// including file, then in the --include-dir folders, followed into their own
// local includes (each header once); the --pre-include files come first, as
// the build includes them first. `complete` is false when a local include
// names a file none of those folders holds: its macros are unknown, so a
// conditional on a name only it could define stays undecided
// (analysis/default_build.hpp).
#include <string>
#include <vector>

#include "analysis/file_symbols.hpp"

namespace gi {

analysis::IncludedHeaders read_included_headers(const std::string& source, const std::string& file_name,
                                                const std::vector<std::string>& include_dirs,
                                                const std::vector<std::string>& pre_includes = {});

}  // namespace gi

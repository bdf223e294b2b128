#include "gi/seed/seed_build.hpp"

#include "fitness/compile/nvrtc_compiler.hpp"
#include "gi/seed/seed.hpp"
#include "gi/seed/system_header_stand_ins.hpp"
#include "grammar/kernel_structure.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gi {
namespace fs = std::filesystem;

// The stand-in of a header with nothing device code needs (gi/seed/system_header_stand_ins.hpp).
const char* const kSetAsideHeader = "// set aside by gi: a system header NVRTC does not have\n";

namespace {

struct Include {
  std::string name;
  bool quoted = false;
};

// `#include "x.h"` / `# include <x.h>` at the start of a line.
std::vector<Include> includes_of(const std::string& text) {
  std::vector<Include> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] != '#') continue;
    p = line.find_first_not_of(" \t", p + 1);
    if (p == std::string::npos || line.compare(p, 7, "include") != 0) continue;
    p = line.find_first_not_of(" \t", p + 7);
    if (p == std::string::npos || (line[p] != '"' && line[p] != '<')) continue;
    const char close = line[p] == '"' ? '"' : '>';
    const std::size_t end = line.find(close, p + 1);
    if (end == std::string::npos || end == p + 1) continue;
    out.push_back({line.substr(p + 1, end - p - 1), close == '"'});
  }
  return out;
}

// The C and C++ standard libraries' headers and the POSIX ones real CUDA
// files include for their host code. A project's own header named with <>
// that is not on the include path is not one of them: NVRTC's error then
// names it, instead of an empty stand-in hiding it.
bool is_system_header(const std::string& name) {
  static const std::set<std::string> names = {
      // C
      "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "limits.h", "locale.h",
      "math.h", "setjmp.h", "signal.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
      "string.h", "time.h", "wchar.h", "wctype.h", "malloc.h", "memory.h", "omp.h", "pthread.h", "unistd.h",
      "fcntl.h", "dirent.h", "getopt.h", "strings.h", "values.h", "error.h",
      // The old CUDA SDK's host utilities (timers, CUT_SAFE_CALL), which no
      // toolkit ships now; its device maths, cutil_math.h, is not one.
      "cutil.h", "cutil_inline.h",
      // C++
      "algorithm", "array", "atomic", "bitset", "cassert", "cfloat", "chrono", "climits", "cmath", "complex",
      "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "deque", "exception", "fstream", "functional",
      "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator", "limits", "list", "map", "memory", "mutex",
      "new", "numeric", "optional", "ostream", "queue", "random", "set", "sstream", "stack", "stdexcept", "string",
      "string_view", "thread", "tuple", "type_traits", "typeinfo", "unordered_map", "unordered_set", "utility",
      "valarray", "variant", "vector", "filesystem", "cerrno", "cctype", "cinttypes", "cstdarg"};
  return names.count(name) > 0 || name.rfind("sys/", 0) == 0;
}

// The toolkit's file for an include name (include/ or include/cccl), empty
// when the toolkit has none.
fs::path in_toolkit(const std::string& name) {
  for (const fs::path& dir : fitness::toolkit_include_dirs())
    if (fs::is_regular_file(dir / name)) return dir / name;
  return {};
}

// NVRTC opens a toolkit header itself, but the standard headers whose types
// it uses (cuda.h: <stdlib.h>, <stdint.h>) need stand-ins; the toolkit's own
// headers are followed, never handed over (NVRTC has its own view of some).
void stand_ins_for_toolkit_header(const fs::path& file, int depth,
                                  std::set<std::string>& seen, std::vector<std::pair<std::string, std::string>>& out) {
  if (depth >= 64) return;
  for (const Include& inc : includes_of(read_text_file(file))) {
    if (seen.count(inc.name)) continue;
    const fs::path own = inc.quoted && fs::is_regular_file(file.parent_path() / inc.name) ? file.parent_path() / inc.name
                                                                                          : in_toolkit(inc.name);
    if (!own.empty() && fs::is_regular_file(own)) {
      seen.insert(inc.name);
      stand_ins_for_toolkit_header(own, depth + 1, seen, out);
    } else if (stand_in_has_content(inc.name)) {  // only the types: a toolkit header's other host needs stay NVRTC's business
      seen.insert(inc.name);
      out.emplace_back(inc.name, system_header_stand_in(inc.name));
    }
  }
}

void collect(const std::string& text, const fs::path& dir, const std::vector<fs::path>& include_dirs, int depth,
             std::set<std::string>& seen, std::vector<std::pair<std::string, std::string>>& out) {
  for (const Include& inc : includes_of(text)) {
    if (seen.count(inc.name)) continue;
    std::vector<fs::path> where;
    if (inc.quoted) where.push_back(dir);
    where.insert(where.end(), include_dirs.begin(), include_dirs.end());
    bool found = false;
    for (const fs::path& d : where) {
      const fs::path file = d / inc.name;
      if (!fs::is_regular_file(file)) continue;
      if (depth >= 64) throw std::runtime_error(file.string() + ": includes nest deeper than 64 (a cycle?)");
      seen.insert(inc.name);
      out.emplace_back(inc.name, read_text_file(file));
      const std::string content = out.back().second;
      collect(content, file.parent_path(), include_dirs, depth + 1, seen, out);
      found = true;
      break;
    }
    // A system header NVRTC does not have (<stdio.h>, <iostream>, <cuda.h>'s
    // host parts): the host code that needed it is set aside, and device
    // code does without (printf and the math functions are NVRTC's own).
    const fs::path toolkit_file = in_toolkit(inc.name);
    // `#include "math.h"` too: a compiler falls back to the system's folders.
    if (!found && is_system_header(inc.name) && toolkit_file.empty()) {
      seen.insert(inc.name);
      out.emplace_back(inc.name, system_header_stand_in(inc.name));
    } else if (!found && !toolkit_file.empty()) {
      seen.insert(inc.name);
      stand_ins_for_toolkit_header(toolkit_file, depth + 1, seen, out);
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> find_headers(const std::string& source, const fs::path& source_dir,
                                                              const std::vector<fs::path>& include_dirs) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  collect(source, source_dir, include_dirs, 0, seen, out);
  return out;
}

std::vector<std::string> SeedBuild::compile_options() const {
  std::vector<std::string> out = nvrtc_options;
  for (const std::string& name : pre_includes) out.push_back("--pre-include=" + name);
  return out;
}

std::unordered_set<std::string> find_build_headers(SeedBuild& build, const std::string& source,
                                                   const fs::path& source_dir) {
  // A pre-include is read as if the file began with `#include "NAME"`, and
  // found by the same look-up; one found nowhere (or only stood in for) is named.
  std::string text;
  for (const std::string& name : build.pre_includes) text += "#include \"" + name + "\"\n";
  build.headers = find_headers(text + source, source_dir, build.include_dirs);
  for (const std::string& name : build.pre_includes)
    if (std::none_of(build.headers.begin(), build.headers.end(), [&](const auto& h) {
          return h.first == name && h.second.rfind(kSetAsideHeader, 0) != 0;
        }))
      throw std::runtime_error("pre-include '" + name + "': not found in " + source_dir.string() +
                               " nor in the include folders");
  // The type names of the headers as written, then NVRTC's view of each:
  // its device side (grammar::header_device_view). Stand-ins name C's types,
  // known already.
  std::unordered_set<std::string> types;
  for (const auto& [name, header] : build.headers) {
    if (header.rfind(kSetAsideHeader, 0) == 0) continue;
    const auto names = grammar::header_type_names(header, name);
    types.insert(names.begin(), names.end());
  }
  for (auto& [name, header] : build.headers)
    if (header.rfind(kSetAsideHeader, 0) != 0) header = grammar::header_device_view(header, name, types);
  return types;
}

SeedBuild read_seed_build(const nlohmann::json& spec, const std::string& spec_name, const fs::path& seed_dir) {
  SeedBuild b;
  b.include_dirs.push_back(fs::absolute(seed_dir).lexically_normal());
  auto strings = [&](const char* field) {
    std::vector<std::string> out;
    if (!spec.contains(field)) return out;
    const nlohmann::json& v = spec.at(field);
    if (!v.is_array()) throw std::runtime_error(spec_name + ": " + field + ": expected an array of strings");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get<std::string>().empty())
        throw std::runtime_error(spec_name + ": " + field + "[" + std::to_string(i) + "]: expected a non-empty string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  };
  for (const std::string& d : strings("include_dirs")) {
    const fs::path dir = fs::absolute(seed_dir / d).lexically_normal();
    if (!fs::is_directory(dir))
      throw std::runtime_error(spec_name + ": include_dirs: '" + d + "' is not a folder (relative to " + seed_dir.string() + ")");
    b.include_dirs.push_back(dir);
  }
  b.nvrtc_options = strings("nvrtc_options");
  b.pre_includes = strings("pre_includes");
  return b;
}

}  // namespace gi

#include "gi/seed/included_headers.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_set>

#include "grammar/kernel_structure.hpp"
#include "grammar/token.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

class HeaderReader {
 public:
  HeaderReader(const std::vector<std::string>& include_dirs) {
    for (const std::string& d : include_dirs) dirs_.emplace_back(d);
  }

  // The local includes of `text` (a file in `folder`), in order, each read
  // with its own includes before the next.
  // An `#include <name>` is the project's where an --include-dir holds it
  // (CubicInterpolationCUDA's examples build with -I../../code and write
  // `#include <cubicTex2D.cu>`), a system header otherwise.
  void follow(const std::string& text, const fs::path& folder, int depth) {
    static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
    static const std::regex angle_include(R"re(^\s*#\s*include\s*<([^>]+)>)re");
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, include)) read(m[1].str(), folder, depth);
      else if (std::regex_search(line, m, angle_include) && in_include_dirs(m[1].str())) read(m[1].str(), folder, depth);
    }
  }

  bool in_include_dirs(const std::string& name) const {
    std::error_code ec;
    return std::any_of(dirs_.begin(), dirs_.end(), [&](const fs::path& d) { return fs::is_regular_file(d / name, ec); });
  }

  // `as_given`: a pre-include, also looked for as the user wrote it (from
  // the working folder) before the kernel's folder, as the build looks.
  void read(const std::string& name, const fs::path& folder, int depth, bool as_given = false) {
    std::vector<fs::path> candidates = {folder / name};
    if (as_given) candidates.insert(candidates.begin(), fs::path(name));
    for (const fs::path& d : dirs_) candidates.push_back(d / name);
    for (const fs::path& c : candidates) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      const fs::path canonical = fs::weakly_canonical(c, ec);
      if (!seen_.insert(canonical.string()).second) return;  // read once, as #pragma once or a guard would
      std::ifstream f(c, std::ios::binary);
      std::stringstream text;
      text << f.rdbuf();
      // Its own includes first: they are in force where its lines follow.
      if (depth < 8) follow(text.str(), c.parent_path(), depth + 1);
      for (analysis::DirectiveLine& d : analysis::directive_lines(text.str(), c.filename().string()))
        out_.lines.push_back(std::move(d));
      grammar::SourceFile file{name, text.str(), {}};
      try {
        file.tokens = grammar::tokenize(file.text, c.string());
        // Its functions, for the helpers the kernel calls; the type names of
        // the headers before it (and its own) make `fp x = 0;` a declaration.
        for (const std::string& t : grammar::header_type_names(file.text, name)) type_names_.insert(t);
        parsed_.push_back({name, grammar::parse_kernel(file.text, name, type_names_)});
      } catch (const std::exception&) {  // a header gi cannot read: its macros still count, its code not
      }
      files_.push_back(std::move(file));
      return;
    }
    if (!toolkit_or_standard(name)) missing_ = true;
  }

  // `#include "math.h"`, `#include "cuda.h"`: the C library's or the
  // toolkit's header written with quotes; its macros are no build knob.
  static bool toolkit_or_standard(const std::string& name) {
    static const std::set<std::string> known = {
        "assert.h", "ctype.h",  "errno.h",        "float.h",           "limits.h",           "math.h",
        "stdint.h", "stdio.h",  "stdlib.h",       "string.h",          "time.h",             "stdbool.h",
        "cuda.h",   "cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h", "math_constants.h",
        "cuda_fp16.h", "vector_types.h", "device_functions.h", "sm_20_atomic_functions.h", "cuda_texture_types.h"};
    return known.count(name) > 0;
  }

  analysis::IncludedHeaders result() {
    out_.complete = !missing_;
    out_.files = std::make_shared<const std::vector<grammar::SourceFile>>(std::move(files_));
    out_.parsed = std::make_shared<const std::vector<analysis::HeaderCode>>(std::move(parsed_));
    return std::move(out_);
  }

 private:
  std::vector<fs::path> dirs_;
  std::set<std::string> seen_;
  bool missing_ = false;
  analysis::IncludedHeaders out_;
  std::vector<grammar::SourceFile> files_;
  std::vector<analysis::HeaderCode> parsed_;
  std::unordered_set<std::string> type_names_;
};

}  // namespace

analysis::IncludedHeaders read_included_headers(const std::string& source, const std::string& file_name,
                                                const std::vector<std::string>& include_dirs,
                                                const std::vector<std::string>& pre_includes) {
  HeaderReader reader(include_dirs);
  const fs::path folder = fs::path(file_name).parent_path();
  for (const std::string& p : pre_includes) reader.read(p, folder, 0, true);  // as given, beside the kernel, or in an include folder
  reader.follow(source, folder, 0);
  return reader.result();
}

}  // namespace gi

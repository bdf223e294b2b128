#include "gi/seed/seed_build.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gi {
namespace fs = std::filesystem;

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

std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read this header");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void collect(const std::string& text, const fs::path& dir, const std::vector<fs::path>& include_dirs, int depth,
             std::set<std::string>& seen, std::vector<std::pair<std::string, std::string>>& out) {
  for (const Include& inc : includes_of(text)) {
    if (seen.count(inc.name)) continue;
    std::vector<fs::path> where;
    if (inc.quoted) where.push_back(dir);
    where.insert(where.end(), include_dirs.begin(), include_dirs.end());
    for (const fs::path& d : where) {
      const fs::path file = d / inc.name;
      if (!fs::is_regular_file(file)) continue;
      if (depth >= 64) throw std::runtime_error(file.string() + ": includes nest deeper than 64 (a cycle?)");
      seen.insert(inc.name);
      out.emplace_back(inc.name, read_file(file));
      const std::string content = out.back().second;
      collect(content, file.parent_path(), include_dirs, depth + 1, seen, out);
      break;
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
  return b;
}

}  // namespace gi

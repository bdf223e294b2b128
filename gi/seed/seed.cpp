#include "gi/seed/seed.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "fitness/workload/kernel_spec.hpp"
#include "grammar/source_hash.hpp"

namespace gi {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Seed load_seed(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path kernel = path;
  if (fs::is_directory(path) || path.extension() != ".cu") kernel = path / "kernel.cu";
  if (!fs::is_regular_file(kernel))
    throw std::runtime_error(kernel.string() + ": no such file: expected a seed folder holding kernel.cu");
  // `gi mutants k.cu` names no folder: the kernel's is the working directory.
  const fs::path dir = kernel.parent_path().empty() ? fs::path(".") : kernel.parent_path();
  Seed seed{dir, "", read_text_file(kernel), {}, std::nullopt, {}, "", {}};
  seed.sha256 = grammar::sha256_hex(seed.source);
  // The diff names the file relative to where the user stands, so that
  // `patch -p1` applies it from there.
  fs::path shown = kernel.lexically_normal();
  if (shown.is_absolute()) {
    const fs::path rel = shown.lexically_relative(fs::current_path());
    if (!rel.empty() && *rel.begin() != "..") shown = rel;
  }
  seed.display_path = shown.generic_string();
  const fs::path spec = seed.dir / "spec.json";
  if (fs::is_regular_file(spec)) {
    try {
      seed.spec = nlohmann::json::parse(read_text_file(spec));
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(spec.string() + ": malformed JSON: " + e.what());
    }
    seed.context = fitness::read_switches(*seed.spec, spec.string(), seed.source, seed.display_path);
    seed.build = read_seed_build(*seed.spec, spec.string(), seed.dir);
  } else {
    seed.build.include_dirs.push_back(fs::absolute(seed.dir).lexically_normal());
  }
  const auto types = find_build_headers(seed.build, seed.source, seed.dir);
  seed.grammar = grammar::Grammar::from_source(seed.source, kernel.filename().string(), types);
  return seed;
}

void add_to_build(Seed& seed, const std::vector<std::filesystem::path>& include_dirs,
                  const std::vector<std::string>& nvrtc_options, const std::vector<std::string>& pre_includes) {
  namespace fs = std::filesystem;
  for (const fs::path& d : include_dirs) {
    if (!fs::is_directory(d)) throw std::runtime_error("--include-dir " + d.string() + ": not a folder");
    seed.build.include_dirs.push_back(fs::absolute(d).lexically_normal());
  }
  seed.build.nvrtc_options.insert(seed.build.nvrtc_options.end(), nvrtc_options.begin(), nvrtc_options.end());
  seed.build.pre_includes.insert(seed.build.pre_includes.end(), pre_includes.begin(), pre_includes.end());
  // Headers found now may make types the kernel uses.
  const auto types = find_build_headers(seed.build, seed.source, seed.dir);
  seed.grammar = grammar::Grammar::from_source(seed.source, seed.grammar.file_name(), types);
}

}  // namespace gi

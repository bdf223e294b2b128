#include "gi/library/library_root.hpp"

#include <cstdlib>
#include <stdexcept>

namespace gi {
namespace fs = std::filesystem;

namespace {

bool holds_library(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "seeds", ec) && fs::is_regular_file(dir / "scripts" / "report" / "gi_report.py", ec);
}

}  // namespace

std::optional<Library> find_library(const fs::path& executable, const char* gi_library, std::vector<std::string>* looked_at) {
  auto look = [&](const fs::path& p) {
    if (looked_at) looked_at->push_back(p.string());
  };
  if (gi_library && *gi_library) {
    const fs::path root = fs::absolute(gi_library).lexically_normal();
    look(root);
    std::error_code ec;
    if (!fs::is_directory(root / "seeds", ec))
      throw std::runtime_error("GI_LIBRARY=" + std::string(gi_library) + ": no seeds/ folder there (GI_LIBRARY names "
                               "the folder that holds seeds/, evolved/ and scripts/report/)");
    return Library{root, "GI_LIBRARY"};
  }
  if (executable.empty()) return std::nullopt;
  const fs::path bin = fs::absolute(executable).lexically_normal().parent_path();
  const fs::path installed = (bin.parent_path() / "share" / "gi").lexically_normal();
  look(installed);
  if (holds_library(installed)) return Library{installed, "installed beside the executable"};
  for (fs::path dir = bin; !dir.empty(); dir = dir.parent_path()) {
    look(dir);
    if (holds_library(dir)) return Library{dir, "a checkout above the executable"};
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

const Library& library() {
  static const Library found = [] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    std::vector<std::string> looked_at;
    if (auto l = find_library(ec ? fs::path() : exe, std::getenv("GI_LIBRARY"), &looked_at)) return *l;
    std::string where;
    for (const auto& p : looked_at) where += "\n  " + p;
    throw std::runtime_error("gi cannot find its library (seeds/, evolved/, scripts/report/); looked in:" + where +
                             "\nset GI_LIBRARY to the folder that holds them (a checkout of gi, or <prefix>/share/gi)");
  }();
  return found;
}

fs::path resolve_seed_dir(const std::string& argument) {
  std::error_code ec;
  if (argument.empty() || fs::exists(argument, ec)) return argument;
  const fs::path relative(argument);
  if (relative.is_absolute()) return argument;
  try {
    // "family/kernel", or "seeds/family/kernel" as the README writes it from a checkout.
    for (const fs::path& in_library : {library().seeds() / relative, library().root / relative})
      if (fs::is_directory(in_library, ec)) return in_library;
  } catch (const std::runtime_error&) {
    // No library: the argument stays as it is and load_seed names it.
  }
  return argument;
}

}  // namespace gi

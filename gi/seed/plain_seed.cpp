#include "gi/seed/plain_seed.hpp"

#include <regex>
#include <stdexcept>

#include "fitness/process/atomic_file.hpp"
#include "grammar/patch_apply.hpp"
#include "grammar/switches.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

// Every string in `j` with each switch name (a whole word) replaced by its value.
void substitute(nlohmann::json& j, const std::map<std::string, std::string>& values) {
  if (j.is_string()) {
    std::string text = j.get<std::string>();
    for (const auto& [name, value] : values) text = std::regex_replace(text, std::regex("\\b" + name + "\\b"), value);
    j = text;
    return;
  }
  if (j.is_array() || j.is_object())
    for (auto& item : j) substitute(item, values);
}

}  // namespace

fs::path write_plain_seed(const Seed& seed, const fs::path& out) {
  if (!seed.spec) throw std::runtime_error(seed.dir.string() + ": no spec.json, so no plain seed to write");
  const std::string family = seed.spec->value("family", "");
  if (family.empty()) throw std::runtime_error(seed.dir.string() + "/spec.json: no family");
  const fs::path dir = out / family / fs::absolute(seed.dir).lexically_normal().filename();
  if (fs::exists(dir)) throw std::runtime_error(dir.string() + " exists already");
  nlohmann::json spec = *seed.spec;
  const std::map<std::string, std::string> defaults = grammar::switch_values(seed.grammar, seed.context);
  spec.erase("switches");
  spec.erase("switch_combinations");
  for (const char* field : {"launch", "min_bytes", "tunables"})
    if (spec.contains(field)) substitute(spec[field], defaults);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(seed.dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "kernel.cu" || name == "spec.json" || !entry.is_regular_file()) continue;
    fs::copy_file(entry.path(), dir / name);
  }
  // The source gi compiles for the seed itself: every switch at its default, resolved.
  const std::string source = grammar::apply_patch(seed.grammar, grammar::Patch{}, seed.context);
  fitness::write_file_atomically(dir / "kernel.cu", grammar::resolve_switches(source, defaults, seed.grammar.file_name()));
  fitness::write_file_atomically(dir / "spec.json", spec.dump(2) + "\n");
  return dir;
}

}  // namespace gi

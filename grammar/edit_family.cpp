// The registry of edit families (grammar/edit_family.hpp).
#include "grammar/edit_family.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "grammar/edit_text.hpp"

namespace gi::grammar {

namespace {

// Owned families, kept in name order. A function-local static: families
// register from static initialisers of other files, in any order.
std::vector<std::unique_ptr<EditFamily>>& owned() {
  static std::vector<std::unique_ptr<EditFamily>> families;
  return families;
}

std::vector<const EditFamily*>& view() {
  static std::vector<const EditFamily*> families;
  return families;
}

std::string known_names() {
  std::string out;
  for (const EditFamily* f : view()) out += (out.empty() ? "" : ", ") + f->name();
  return out;
}

}  // namespace

std::string to_string(EditGroup group) {
  switch (group) {
    case EditGroup::Line: return "line";
    case EditGroup::Cuda: return "cuda";
    case EditGroup::Structural: return "structural";
    case EditGroup::Transform: return "transform";
    case EditGroup::Switch: return "switch";
  }
  return "?";
}

void EditFamily::parse(ArgumentReader& reader, Edit&) const {
  throw ArgumentError(reader.offset(), "no argument: " + name() + " is written " + syntax());
}

bool register_edit_family(std::unique_ptr<EditFamily> family) {
  if (find_edit_family(family->name()) != nullptr) {
    // A start-up error of the build, not of any input: say it and stop.
    std::fprintf(stderr, "gi: two edit families are named '%s'\n", family->name().c_str());
    std::abort();
  }
  owned().push_back(std::move(family));
  auto& v = view();
  v.clear();
  for (const auto& f : owned()) v.push_back(f.get());
  std::sort(v.begin(), v.end(), [](const EditFamily* a, const EditFamily* b) { return a->name() < b->name(); });
  return true;
}

const std::vector<const EditFamily*>& edit_families() {
  if (view().empty())
    throw std::logic_error("no edit family is registered: link the OBJECT library gi_edits into this executable");
  return view();
}

const EditFamily* find_edit_family(std::string_view name) {
  for (const EditFamily* f : view())
    if (f->name() == name) return f;
  return nullptr;
}

const EditFamily& edit_family(std::string_view name) {
  if (const EditFamily* f = find_edit_family(name)) return *f;
  throw std::runtime_error("unknown edit family '" + std::string(name) + "' (known: " + known_names() + ")");
}

std::vector<std::string> parse_family_list(const std::string& list) {
  std::vector<std::string> out, removed;
  auto add = [&](std::vector<std::string>& to, const std::string& name) {
    if (std::find(to.begin(), to.end(), name) == to.end()) to.push_back(name);
  };
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    // "-name" leaves a family or group out ("all,-delete": an ablation's cell).
    const bool remove = name[0] == '-';
    if (remove) name.erase(0, 1);
    bool found = false;
    for (const EditFamily* f : edit_families())
      if (name == "all" || f->name() == name || to_string(f->group()) == name) {
        add(remove ? removed : out, f->name());
        found = true;
      }
    if (!found)
      throw std::runtime_error("unknown edit family '" + name + "': expected one of " + known_names() +
                               ", a group (line, cuda, structural, transform, switch) or all, each may start with '-' to leave it out");
  }
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const std::string& n) { return std::find(removed.begin(), removed.end(), n) != removed.end(); }),
            out.end());
  if (out.empty() && !removed.empty()) throw std::runtime_error("edit family list '" + list + "' leaves no family");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gi::grammar

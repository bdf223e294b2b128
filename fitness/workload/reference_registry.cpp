#include "fitness/workload/reference_registry.hpp"

#include <mutex>
#include <set>
#include <stdexcept>

namespace gi::fitness {

namespace {

template <typename Fn>
struct Table {
  std::map<std::string, Fn> entries;
  std::set<std::string> duplicates;
};

// Function-local statics: registration runs during static initialisation of
// other translation units, in an order we do not control.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
Table<GeneratorFn>& generators() {
  static Table<GeneratorFn> t;
  return t;
}
Table<ReferenceFn>& references() {
  static Table<ReferenceFn> t;
  return t;
}

template <typename Fn>
void add(Table<Fn>& table, const std::string& name, Fn fn) {
  std::lock_guard lock(registry_mutex());
  if (!table.entries.emplace(name, fn).second) table.duplicates.insert(name);
}

template <typename Fn>
std::string known_names(const Table<Fn>& table) {
  std::string s;
  for (const auto& [name, fn] : table.entries) s += (s.empty() ? "" : ", ") + name;
  return s.empty() ? "none: are the seeds (gi_seeds) linked?" : s;
}

template <typename Fn>
Fn lookup(const Table<Fn>& table, const std::string& name, const char* what) {
  std::lock_guard lock(registry_mutex());
  if (table.duplicates.count(name) != 0)
    throw std::runtime_error(std::string(what) + " '" + name + "' is registered more than once");
  const auto it = table.entries.find(name);
  if (it == table.entries.end())
    throw std::runtime_error(std::string("unknown ") + what + " '" + name + "' (known: " +
                             known_names(table) + ")");
  return it->second;
}

template <typename Fn>
std::vector<std::string> names(const Table<Fn>& table) {
  std::lock_guard lock(registry_mutex());
  std::vector<std::string> v;
  for (const auto& [name, fn] : table.entries) v.push_back(name);
  return v;
}

}  // namespace

void register_generator(const std::string& name, GeneratorFn fn) { add(generators(), name, fn); }
void register_reference(const std::string& entry, ReferenceFn fn) { add(references(), entry, fn); }

GeneratorFn find_generator(const std::string& name) { return lookup(generators(), name, "generator"); }
ReferenceFn find_reference(const std::string& entry) { return lookup(references(), entry, "reference"); }

namespace {
std::map<std::string, SeedReferenceProvider>& seed_references() {
  static std::map<std::string, SeedReferenceProvider> m;
  return m;
}
}  // namespace

void set_seed_reference(const std::string& entry, SeedReferenceProvider provider) {
  std::lock_guard lock(registry_mutex());
  seed_references()[entry] = std::move(provider);
}

SeedReferenceProvider find_seed_reference(const std::string& entry) {
  std::lock_guard lock(registry_mutex());
  const auto it = seed_references().find(entry);
  if (it == seed_references().end())
    throw std::runtime_error("the spec makes the seed its own reference (\"reference\": \"seed\"), and this "
                             "command has no run of the seed for '" + entry + "': it needs a GPU command "
                             "(gi evolve, gi check, gi verify) or gi emulate");
  return it->second;
}

bool has_generator(const std::string& name) {
  std::lock_guard lock(registry_mutex());
  return generators().entries.count(name) != 0;
}
bool has_reference(const std::string& entry) {
  std::lock_guard lock(registry_mutex());
  return references().entries.count(entry) != 0;
}

std::vector<std::string> generator_names() { return names(generators()); }
std::vector<std::string> reference_names() { return names(references()); }

}  // namespace gi::fitness

#include "fitness/gpu/entry_symbol.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gi::fitness {

namespace {

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

// "void ns::scale<float, 2>(float*, int)" -> "ns::scale<float,2>": the name
// before the top-level parameter list ('(' outside template arguments),
// after the return type a template instance's symbol carries.
std::string name_part(std::string demangled) {
  // An unnamed namespace's members are named through its parent in source
  // (NiftyReg's `namespace NiftyReg::Cuda { namespace { ... } }`); its
  // demangled "(anonymous namespace)::" would also end the name at its '('.
  for (std::size_t at; (at = demangled.find("(anonymous namespace)::")) != std::string::npos;)
    demangled.erase(at, std::string("(anonymous namespace)::").size());
  int angle = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    const char c = demangled[i];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (c == ' ' && angle == 0) start = i + 1;
    if (c == '(' && angle == 0) return without_spaces(demangled.substr(start, i - start));
  }
  return without_spaces(demangled);
}

}  // namespace

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

EntryMatch match_entry(const std::vector<std::string>& symbols, const std::string& entry) {
  EntryMatch m;
  for (const std::string& s : symbols)
    if (s == entry) {
      m.symbol = s;
      return m;
    }
  const std::string want = without_spaces(entry);
  std::vector<std::string> found;
  for (const std::string& s : symbols) {
    const std::string name = name_part(demangle(s));
    if (name == want || (name.size() > want.size() + 2 && name.compare(name.size() - want.size() - 2, std::string::npos, "::" + want) == 0))
      found.push_back(s);
  }
  if (found.size() == 1) {
    m.symbol = found.front();
    return m;
  }
  std::string listed;
  for (const std::string& s : found.empty() ? symbols : found) listed += (listed.empty() ? "" : ", ") + demangle(s);
  m.problem = found.empty() ? "no kernel named '" + entry + "' in the module (it has: " + listed + ")"
                            : "'" + entry + "' names " + std::to_string(found.size()) +
                                  " kernels of the module (" + listed + "): give the entry as one of them";
  return m;
}

bool entry_is_template_instance(const std::string& entry) { return entry.find('<') != std::string::npos; }

}  // namespace gi::fitness

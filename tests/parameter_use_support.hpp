#pragma once
// Shared by the tests of gi init's inference (analysis/parameter_use.hpp):
// a kernel source analysed as `gi init` does, and one pointer's count as text.
#include <stdexcept>
#include <string>

#include "analysis/parameter_use.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::test {

inline analysis::ParameterUse use_of(const std::string& source) {
  const grammar::ParsedKernel k = grammar::parse_kernel(source, "k.cu");
  for (const auto& f : k.functions)
    if (f.is_kernel) return analysis::analyse_parameter_use(k, f);
  throw std::runtime_error("no kernel");
}

inline const analysis::PointerUse& pointer(const analysis::ParameterUse& u, const std::string& name) {
  for (const auto& p : u.pointers)
    if (p.name == name) return p;
  throw std::runtime_error("no pointer " + name);
}

// The count's text, or "none: " and the refusal.
inline std::string count(const analysis::ParameterUse& u, const std::string& name) {
  const auto& p = pointer(u, name);
  return p.count ? p.count->text() : "none: " + p.refusal;
}

}  // namespace gi::test

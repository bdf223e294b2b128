#pragma once
// Which function of a loaded module a spec's entry names. An `extern "C"`
// kernel's symbol is its name; a C++ kernel's is mangled (`_Z5scalePfi`),
// and a template instance's too (`scale<float, 2>`): a user writes the name
// as in the source, so the module's symbols are demangled and matched. (NVRTC
// instantiates a template instance when the entry is given as a name
// expression: CompileRequest::name_expressions.)
#include <string>
#include <vector>

namespace gi::fitness {

// The C++ name of a mangled symbol ("scale<float, 2>(float*, int)"); the
// symbol itself when it is not mangled.
std::string demangle(const std::string& symbol);

struct EntryMatch {
  std::string symbol;  // empty when none or several match
  std::string problem;
};

// The symbol among `symbols` whose name is `entry`: the same symbol, or a
// demangled name whose part before the parameter list equals `entry` or ends
// in "::" + entry (spaces ignored, so `scale<float,2>` finds `scale<float, 2>`).
// Several matches (overloads, namespaces) and none are problems naming the
// candidates.
EntryMatch match_entry(const std::vector<std::string>& symbols, const std::string& entry);

// Whether a spec's entry needs NVRTC to instantiate it: a template instance.
bool entry_is_template_instance(const std::string& entry);

}  // namespace gi::fitness

#pragma once
// A kernel defined inside a namespace, as code at file scope names it:
// NiftyReg's kernels live in `namespace NiftyReg::Cuda { namespace { ... } }`,
// so the CPU emulator's launcher, appended after the source, must call
// `NiftyReg::Cuda::BuildCovariance` (an unnamed namespace's members are
// reached through its parent). On the GPU the module's symbols are matched
// by their demangled names instead (fitness/gpu/entry_symbol.hpp).
#include <string>
#include <string_view>

namespace gi::grammar {

// `entry` qualified by the named namespaces around the __global__ function
// it names; unchanged where it already holds "::" or no such kernel is in
// the source.
std::string entry_qualified_from_file_scope(std::string_view source, const std::string& entry);

}  // namespace gi::grammar

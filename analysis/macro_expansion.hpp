#pragma once
// A function-like macro's use read as its expansion: `IDX2C(c, 0, lda)`
// under `#define IDX2C(i, j, ld) (((j) * (ld)) + (i))` is the expression
// `((0) * (lda)) + (c)`, the arguments' own trees put in for the
// parameters. The macro's own nodes take the use's token range, so a name in
// the body is looked up where the macro is used, as the preprocessor puts
// it there. Bodies that are no expression (statements, `#` or `##`) are
// refused with the reason.
#include <optional>
#include <string>

#include "analysis/expression.hpp"
#include "analysis/file_symbols.hpp"

namespace gi::analysis {

// `call`: a Call node whose callee names `macro`.
std::optional<Expr> expand_macro_call(const Expr& call, const std::string& name, const FunctionMacro& macro,
                                      std::string& why);

}  // namespace gi::analysis

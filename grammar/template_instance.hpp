#pragma once
// A template kernel as one of its instances: `template <typename T> __global__
// void scale(T* out, const T* in, T factor, int n)` is evolved as
// `scale<float>`, the entry a spec names (NVRTC instantiates it from that
// name expression, fitness/gpu/entry_symbol.hpp). gi init reads the instance's
// parameter types and indices from the kernel's text with the template
// parameters written out (instantiated_source), so its analyses, which read
// source, see `float* out` and not `T* out`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/kernel_structure.hpp"

namespace gi::grammar {

// The source's name of the kernel a spec's entry names: `reg::cuda::scale<float, 2>`
// is `scale` (namespaces and template arguments are the compiler's business,
// fitness/gpu/entry_symbol.hpp). What every look-up of the entry's function
// by name compares with.
std::string entry_function_name(const std::string& entry);

struct TemplateInstance {
  std::string name;               // the template's name, `scale`
  std::vector<std::string> args;  // as written, spaces trimmed: {"float", "2"}
  // `scale<float, 2>`: the spelling a spec's entry and NVRTC's name expression use.
  std::string entry() const;
};

// `scale<float, 2>` as name and arguments (commas inside nested <> or ()
// belong to their argument); nullopt for a plain name. Throws
// std::runtime_error naming the entry where the brackets do not close or an
// argument is empty.
std::optional<TemplateInstance> parse_template_instance(const std::string& entry);

struct TemplateParameter {
  std::string name;           // T, N
  bool type = true;           // typename/class T; false: a value, `int N`
  std::string default_value;  // `= float`, empty where none
};

// The parameters of `f`'s template header (`template <typename T, int N = 4>`);
// empty for a function that is no template.
std::vector<TemplateParameter> template_parameters(const ParsedKernel& k, const Function& f);

// The instances of template kernel `name` the file instantiates explicitly
// (`template __global__ void scale<float>(float*, ...);`), in file order,
// each with the line it is on.
struct ExplicitInstance {
  TemplateInstance instance;
  int line = 0;
  std::size_t element = 0;  // its TopLevel element in ParsedKernel::elements
};
std::vector<ExplicitInstance> explicit_instances(const ParsedKernel& k, const std::string& name);

// `source` with `f`'s template header blanked (its lines kept) and each of
// its template parameters, in the function's header and body, replaced by
// the instance's argument (or its default): the kernel as the instance reads
// it, at the same line numbers. Throws std::runtime_error where the instance
// gives more arguments than the template has, or leaves one without a default.
std::string instantiated_source(std::string_view source, const ParsedKernel& k, const Function& f,
                                const TemplateInstance& instance);

// The instance as a kernel of its own, for `gi init --instantiate`: the
// file with `name`'s template header blanked, its parameters written out
// (instantiated_source) and its explicit instantiations blanked (they would
// name a template no longer there), lines kept. Its entry is the plain name.
// Throws std::runtime_error where the file has no template kernel `instance.name`.
std::string written_out_instance(std::string_view source, const std::string& file_name, const TemplateInstance& instance);

}  // namespace gi::grammar

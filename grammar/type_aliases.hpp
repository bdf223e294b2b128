#pragma once
// Names a kernel's source gives a built-in type, as a project spells its
// element type once: `#define fp float` (Rodinia), `typedef double real;`,
// `using index_t = int;`. gi init drafts a parameter `fp* d_I` as a buffer
// of float, and a spec's "type": "float" matches it, where the alias is in
// kernel.cu or in a header the build pre-includes.
#include <map>
#include <string>
#include <string_view>

namespace gi::grammar {

// Each alias in `text` whose definition is built-in type words only
// (`unsigned int`, `long long`, `size_t`, `float4`), by name: that spelling
// (grammar::header_type_aliases, the parser's reading of type names;
// comments and never-taken `#if 0` text ignored). A macro with parameters, a
// pointer, an array or a struct typedef is none.
std::map<std::string, std::string> type_aliases(std::string_view text);

// `base` with aliases followed (fp -> float; a chain up to 8 deep); `base`
// itself where it is no alias.
std::string resolve_type_alias(const std::map<std::string, std::string>& aliases, const std::string& base);

// The 8- or 16-bit integer a C spelling names: "uint8" for `unsigned char`,
// `uchar`, `uint8_t`; "int8" for `char` (signed on every platform CUDA runs
// on), `signed char`, `int8_t`; "uint16", "int16" likewise; "" for any other.
// The spec's type names (fitness::type_matches) and the vector loads of
// coarsen (grammar/edits/vector_loads.cpp) both read them here.
std::string narrow_integer_type(const std::string& spelling);

// Components of a CUDA vector type (float4 -> 4, uchar2 -> 2, longlong1 ->
// 1), 0 for any other name: the one reading of CUDA's vector spellings (a
// vector is no struct gi looks for, and an operator's operand type).
int cuda_vector_components(const std::string& type);

// Bytes of a built-in type as CUDA lays it out on a 64-bit host (`uchar` 1,
// `float` 4, `float3` 12, `double2` 16), const and volatile ignored; 0 for
// any other name (a struct, a template parameter). A cast alias's element
// width reads it: `(float*)(bytes + off)` over `uchar* bytes` steps 4 of them.
int builtin_type_bytes(const std::string& type);
// Its alignment: a vector of 2 or 4 aligns to its size, a vector of 3 or 1
// to its component's, a scalar to its size; 0 where builtin_type_bytes is.
int builtin_type_alignment(const std::string& type);

}  // namespace gi::grammar

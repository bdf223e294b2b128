#pragma once
// A struct the kernel's buffers hold (an array of structures: `Particle* p`,
// `struct Particle { float3 pos; float3 vel; float mass; };`), read as what
// gi can generate and check: so many components of one type, float, int,
// unsigned or double, laid out as C lays them out with no padding between or
// after them. A buffer of n such records is then, byte for byte, a buffer of
// n * words values of that type; gi draws, fills and checks it as one.
//
// The layout is written in a spec as the struct's members in order, each a
// type gi knows and, for an array member, its length: ["float3", "float3",
// "float"], ["float[9]"] for `float m[3][3]`.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "grammar/token.hpp"

namespace gi::grammar {

// What a layout holds: its one component type and how many per record, and
// the record's bytes; or `refusal`, why it is none gi can read as that.
struct RecordWords {
  std::string word;  // float, int, unsigned, double
  int words = 0;
  std::size_t bytes = 0;
  std::string refusal;
};
RecordWords record_words(const std::vector<std::string>& layout);

// Where each component of a layout lies, as C lays out a struct of those
// members (each on its alignment, the whole rounded up to the largest):
// what a struct passed by value needs, whose members may mix types and
// leave padding. `refusal` names an entry that is no member type gi knows.
struct RecordFields {
  std::vector<std::pair<std::string, std::size_t>> components;  // component type ("float", "int") and byte offset
  std::size_t bytes = 0;
  std::string refusal;
};
RecordFields record_fields(const std::vector<std::string>& layout);

struct RecordType {
  std::string name;
  std::vector<std::string> layout;   // as in a spec
  std::vector<std::string> members;  // each layout entry's member, a nested one's joined by '_' ("a_lat")
  RecordWords words;
  int line = 0;      // of the definition
  std::string file;  // where it is defined: "" for the kernel's own file, else a header's name
  // "line 14", "Maths.hpp line 40", "NIfTI's nifti1_io.h (gi knows it)"
  std::string where() const;
};

// Each component's name in a record, in layout order: the member ("n"), a
// vector's component after it ("pos_x"), an array's index ("m_0" .. "m_8"):
// the workload variables of a struct passed by value, after its name.
std::vector<std::string> component_names(const RecordType& record);

// The struct `name` that `source` defines (`struct P { ... };`, `typedef
// struct [T] { ... } P;`, or `typedef struct T P;` after T's definition),
// its members flattened (a member that is itself such a struct gives its
// members). Member functions and static members are no part of a record's
// bytes and are passed over. nullopt, with `why`, where `source` has no such
// definition, or a member is of a type gi does not generate, an array of a
// length that is no number, a bit field, or aligned by hand; a layout with
// padding, or of two component types, is a RecordType whose words.refusal
// says so.
// `aliases` (grammar/type_aliases.hpp; null: none) name the built-in type
// a member's type word stands for: `fp x, y, z;` with `#define fp float`.
using TypeAliases = std::map<std::string, std::string>;
std::optional<RecordType> find_record_type(std::string_view source, const std::string& file_name,
                                           const std::string& name, std::string& why);
// The same over a parsed file's tokens (comments are passed over).
std::optional<RecordType> find_record_type(const std::vector<Token>& tokens, const std::string& name, std::string& why,
                                           const TypeAliases* aliases = nullptr);
// The same, looked for in the kernel's tokens, then in each header of
// `headers` (null: none), then among the types gi knows by name
// (well_known_records).
std::optional<RecordType> find_record_type(const std::vector<Token>& tokens, const std::vector<SourceFile>* headers,
                                           const std::string& name, std::string& why,
                                           const TypeAliases* aliases = nullptr);

// The structs a registration kernel takes from a library it reaches through
// headers NVRTC cannot build or that are not at hand: NIfTI-1's matrices
// (mat33, mat44, and the double nifti_dmat33, nifti_dmat44 of NIfTI-2's
// library; row-major `m[i][j]`). Their definitions, written for gi from
// the format's documented layout, as a file gi looks in last and puts in a
// kernel's cut-out headers where the kernel names one (gi/seed/header_device_code.hpp).
const SourceFile& well_known_records();

}  // namespace gi::grammar

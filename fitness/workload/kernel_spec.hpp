#pragma once
// seeds/<family>/<kernel>/spec.json: what a seed kernel computes, on which
// data, and how it is checked. Loading validates every field; an error names
// the file and the JSON path ("seeds/x/y/spec.json: parameters[3].role:
// expected one of in, out, inout, scalar").
//
// Format (an "expr" is a string in the expression language of
// fitness/workload/expression.hpp, or a plain number; it reads the workload's derived
// variables, and launch expressions also read B, the block size):
//
// {
//   "entry": "bspline_deformation_field",  // the extern "C" __global__ function of kernel.cu
//   "family": "bspline",                   // must equal the folder above the kernel's folder
//   "work_item": "active voxel",           // what one thread handles (for people)
//   "parameters": [                        // in the kernel's declaration order, names as in kernel.cu
//     {"name": "controlPointGrid", "type": "float4", "role": "in", "count": expr},
//     {"name": "activeVoxelNumber", "type": "int", "role": "scalar", "value": expr},
//     {"name": "deformationField", "type": "float4", "role": "out", "count": expr,
//      "written": "all",                   // optional, default "all"; or "active_voxels": only
//                                          //   the elements listed in the int input named by
//      "written_indices": "activeVoxels",  //   (optional, default "activeVoxels"); others stay untouched
//      "checked_components": [0, 1, 2, 3]} // optional, default all components of the type
//     (an in buffer only: "texture": true, optional: the kernel's parameter is a
//      cudaTextureObject_t it reads with tex1Dfetch<type>; the runner passes a linear
//      texture over the buffer, of float, float2, float4, int, unsigned or int4;
//      or "texture": {"extent": [expr, expr, expr], "filter": "point", "address": "clamp",
//      "normalized": false}: a texture over a CUDA array of one to three dimensions (width
//      first; element (x, y, z) is the buffer's element x + w * (y + h * z), so count is
//      the extent's product) that tex1D/tex2D/tex3D<type> read at coordinates; filter
//      "point" (default) or "linear" (float types only), address "clamp" (default) or
//      "border" (zero outside), normalized coordinates or not (default))
//     (a float out/inout buffer only: "accumulation_bound": number > 0, optional: the most, in
//      absolute value, one work item adds to one element through its atomics; lets privatise
//      count the buffer's per-block copy in 32-bit fixed point, grammar/edits/privatise.cpp)
//   ],
//   "constants": [                         // optional: __constant__ variables of kernel.cu the launch
//     {"name": "c_VoxelNumber",            //   sets, as a host does with cudaMemcpyToSymbol; each a
//      "type": "int", "value": expr},      //   scalar (int, unsigned, float, double) declared there,
//     {"name": "c_Kernel", "type": "float", //  or an array of that many elements ("count" instead of
//      "count": expr}],                    //   "value"), drawn from the workloads' inputs.c_Kernel
//   types: int, unsigned, float, double (scalars and buffers), bool (scalars), float2, float4, int4 (buffers);
//   a buffer of structs: "type": the struct's name, "layout": its members ["float3", "float3", "float"],
//   records of one component type with no padding (grammar/record_type.hpp); "count" counts records;
//   a struct by value: "type" its name, "layout" its members (any, C's padding), "value" one expr per component;
//   roles: in, out, inout (pointer parameters; out/inout need a non-const pointer), scalar (by value).
//   "launch": {"block": [expr, expr, expr], "grid": [expr, expr, expr],
//              "shared_bytes": expr},      // optional dynamic shared memory, default 0
//   "tolerance": {"abs": number >= 0, "rel": number >= 0},  // |got-ref| <= abs + rel*|ref|
//   "tolerance_note": "why these tolerances (measured float-vs-double errors and margin)",
//   "min_bytes": expr,                     // bytes the kernel must move at least
//   "tunables": {"block_sizes": [64, 128, ...],           // each a multiple of 32 in 32..1024
//                "default_block_size": 128,              // optional, default the first block size
//                "options": [[], ["--use_fast_math"]]},  // compile-option sets; performance options only
//   "switches": [                          // optional: alternative code paths (grammar/switches.hpp)
//     {"name": "BSPLINE_PATH",             //   a `#define BSPLINE_PATH 0` line of kernel.cu (its value
//      "values": [0, 1],                   //   is the default, the plain algorithm) and the values
//      "note": "0: plain, 1: warp-cooperative columns"}],  // define:NAME=VALUE edits may set
//   "switch_combinations": [               // optional: the settings allowed (default: all); each
//     {"BSPLINE_PATH": [0], "ITEMS": [1, 2, 4]}, {"BSPLINE_PATH": [1], "ITEMS": [1]}],  // entry admits
//                                          //   the settings whose switches it names have its values;
//                                          //   numeric switch values are variables of launch expressions
//   "workloads": {
//     "train": {"generator": "bspline_brain", "variables": {...}},  // seed: the run's per-generation seed;
//                                          //   the registration-sized workload whose time ranks variants
//     "train_checks": [                    // optional: small training workloads checked every generation
//       {"generator": ..., "variables": {...},  // for correctness only (never timed): borders, padding,
//        "purpose": "what it drives"}],    //   masks, odd sizes the big one never reaches ("train:1", ...)
//     "validate": [{"generator": ..., "variables": {...}, "seed": 1001}, ...]  // at least 5;
//   }                                      //   seed optional (default 0), added to the caller's seed
//   Any workload may carry its own "tolerance": {"abs", "rel"} with a "tolerance_note" saying why:
//   a workload on which the seed is exact can be checked exactly (e.g. float sums of small integers).
//   "coverage_exempt": [                   // optional: branch directions the training set may leave
//     {"branch": "if@35:13",               //   untaken (`gi verify` fails a seed for any other one);
//      "direction": "false",               //   branch keys as fitness/instrument/branch_coverage.hpp names them
//      "reason": "why it cannot matter"}]  //   (<if|op|?:>@line:column in kernel.cu), direction
// }                                        //   "true" or "false", a non-empty reason
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/workload/expression.hpp"
#include "fitness/workload/launch_plan.hpp"
#include "grammar/edit_context.hpp"

namespace gi::fitness {

struct ParamSpec {
  std::string name;
  std::string type_name;  // as in spec.json ("float4")
  ElementType type = ElementType::F32;
  ParamRole role = ParamRole::In;
  Expression count;  // buffers: elements
  Expression value;  // scalars: the value passed
  std::vector<Expression> components;  // vector scalars (int3, float2, ...): x, y, z, w instead of value
  bool written_all = true;
  std::string written_indices;  // when !written_all: the int In buffer listing written elements
  std::vector<int> checked_components;  // never empty after loading
  // A buffer of structs ("layout", grammar/record_type.hpp): type_name is the
  // struct's, `type` its one component type, record_components values per
  // record, and `count` counts those values (record_count the records).
  std::size_t record_components = 0;
  std::vector<std::string> record_layout;
  Expression record_count;
  // A struct passed by value ("layout" on a scalar): each component's type
  // and byte offset as C lays the struct out, and its bytes with padding;
  // `components` holds one value expression per field.
  struct RecordField {
    ElementType type;
    std::size_t offset;
  };
  std::vector<RecordField> record_fields;
  std::size_t record_bytes = 0;
  // Float out/inout buffers: the most, in absolute value, that one work item
  // adds to one element through its atomics (0: not declared). It lets
  // `privatise` count the buffer's per-block copy in 32-bit fixed point.
  double accumulation_bound = 0;
  // In buffers: read through a cudaTextureObject_t parameter ("texture": true,
  // or an object for a texture over a CUDA array).
  bool texture = false;
  // A texture over a CUDA array ("texture": {"extent": [...], ...}): the
  // extent's one to three expressions (width first), and its sampler in
  // `sampler` (whose dimensions is the extent's size and whose extent each
  // workload fills in). Empty for a linear texture.
  std::vector<Expression> texture_extent;
  TextureArray sampler;
  // Constants only: an array __constant__ of `count` elements (no "value"),
  // drawn like an input buffer from the workload's inputs distribution of
  // its name, and copied to the symbol before each launch.
  bool constant_array = false;
  std::string json_path;  // "parameters[3]", for messages

  bool is_buffer() const { return role != ParamRole::Scalar; }
};

struct WorkloadSpec {
  std::string generator;
  nlohmann::json variables = nlohmann::json::object();
  std::uint64_t seed = 0;
  std::string json_path;  // "workloads.train", "workloads.validate[2]"
  std::string purpose;    // train_checks: what the workload drives that the timed one does not
  std::optional<Tolerance> tolerance;  // this workload's own tolerance (else the spec's)
  std::string tolerance_note;
};

// A branch direction the training set need not take (see fitness/instrument/branch_coverage.hpp).
struct CoverageExemption {
  std::string branch;      // "if@35:13"
  bool direction = false;  // the exempted direction
  std::string reason;
  std::string json_path;   // "coverage_exempt[0]"
};

struct KernelSpec {
  std::filesystem::path dir;  // the seed folder
  std::string display_path;   // spec.json as named in messages
  std::string entry, family, work_item;
  std::vector<ParamSpec> parameters;
  // "constants": __constant__ variables of kernel.cu set before each launch
  // (role Scalar, a value or, for an array, constant_array and a count;
  // json_path "constants[N]").
  std::vector<ParamSpec> constants;
  std::array<Expression, 3> block, grid;
  Expression shared_bytes;
  Tolerance tolerance;
  std::string tolerance_note;
  Expression min_bytes;
  std::vector<unsigned> block_sizes;
  unsigned default_block_size = 0;
  std::vector<std::vector<std::string>> option_sets;
  std::vector<grammar::SwitchDef> switches;
  std::vector<std::string> switch_notes;  // one per switch: what its values choose
  // Each switch's value in kernel.cu (its default): the launch expressions
  // see these unless a variant sets another (fitness/workload/workload_plan.hpp).
  std::map<std::string, std::string> switch_defaults;
  grammar::SwitchCombinations switch_combinations;
  WorkloadSpec train;                      // timed: its time ranks variants
  std::vector<WorkloadSpec> train_checks;  // checked with it every generation, never timed
  std::vector<WorkloadSpec> validate;
  std::vector<CoverageExemption> coverage_exempt;
  // "reference": "seed": no CPU reference; the seed's own GPU outputs are the
  // expected ones (fitness/workload/reference_registry.hpp, gi/seed/seed_reference.hpp).
  bool reference_is_seed = false;

  std::filesystem::path kernel_path() const { return dir / "kernel.cu"; }
  const ParamSpec* find_parameter(std::string_view name) const;
  // An array __constant__ of the spec (constant_array), or null.
  const ParamSpec* find_constant_array(std::string_view name) const;
  // "train", "train:N" (train_checks[N-1]) or "validate:N"; throws naming
  // the spec and the accepted forms.
  const WorkloadSpec& workload(std::string_view which) const;
  // The whole training set: "train", then "train:1" .. "train:N".
  std::vector<std::string> training_workloads() const;
  // The training set, then the held-out workloads "validate:0" .. "validate:M".
  std::vector<std::string> every_workload() const;
  // The tolerance a workload is checked with.
  Tolerance tolerance_of(const WorkloadSpec& w) const { return w.tolerance.value_or(tolerance); }
};

struct SpecCheck {
  // Check that the generators and the entry's reference are registered
  // (needs gi_seeds linked). Off for tools that only read the format.
  bool registry = true;
};

// What `gi init` writes where the user must decide (a count, a grid, a
// range): a spec holding a string that starts with it does not load, and the
// error lists every such field.
inline constexpr const char* kFillMarker = "FILL";
std::vector<std::string> fields_to_fill(const nlohmann::json& spec);

// Accepts a seed folder or its spec.json; reads kernel.cu beside it to check
// the entry and its parameters. Throws std::runtime_error naming the file and
// the JSON path of the first problem.
KernelSpec load_kernel_spec(const std::filesystem::path& path, SpecCheck check = {});

// The same checks on an already-read spec; `display_path` names it in messages,
// `kernel_source` is kernel.cu's text (`kernel_name` names it).
// `pre_included`: the text of the headers the build pre-includes (its
// type aliases count, `#define fp float`).
KernelSpec parse_kernel_spec(const nlohmann::json& spec, const std::string& display_path,
                             std::string_view kernel_source, const std::string& kernel_name,
                             SpecCheck check = {}, std::string_view pre_included = {});

// The switches of a spec.json (its "switches" and "switch_combinations",
// checked against kernel.cu's `#define` lines) and its entry kernel, for
// tools that need them without the rest of the spec; throws like load_kernel_spec.
grammar::EditContext read_switches(const nlohmann::json& spec, const std::string& display_path,
                                   std::string_view kernel_source, const std::string& kernel_name);

std::optional<ElementType> element_type_from_name(std::string_view name);
// Whether spec.json's type name `spec_type` ("int", "float4") is the
// kernel's parameter type `base` as the grammar reads it ("int32_t").
bool type_matches(const std::string& spec_type, const std::string& base);
std::string to_string(ParamRole role);

}  // namespace gi::fitness

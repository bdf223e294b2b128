#pragma once
// How a kernel uses its parameters, read from the source alone: for `gi
// init`, which drafts a spec from a kernel and one problem size.
//  - Each pointer's accesses (and a texture object's: tex1Dfetch<T>(t, i) reads
//    element i of a buffer of T): read, written, read and written, or through an
//    atomic (atomicAdd(&p[i], v), atomicAdd(p, v), a compare-and-swap helper
//    of analysis/cas_helpers.hpp); with the element count its indices need.
//  - The count: every index's largest value plus one, as a polynomial over
//    the integer parameters (analysis/symbolic_size.hpp). An index variable's
//    range comes from the guards around the access (`if (i < n)`, `if (x >=
//    nx || y >= ny) return;`, `for (int c = 0; c < cols; ++c)`) and locals are
//    followed to their one definition (`slice = index / (nx * ny)` with
//    `index < nx * ny * nz` gives slice < nz). A pointer handed to a
//    __device__ helper counts the helper's accesses through it (also after
//    `p += e;`); whole-number macros are their value (analysis/file_symbols.hpp).
//  - The work item: the guard's bound on the global thread index per axis
//    (analysis/thread_index.hpp: blockIdx.x * blockDim.x + threadIdx.x, or
//    its blocks flattened from a 2-D grid), which gives the grid; on an axis
//    the kernel never guards, the launch's exact thread count
//    (WorkItem::exact).
//  - An integer vector passed by value or held in a __constant__ (`int3 dim`,
//    `c_ImageSize`) is one size per component: `dim.x` is the size `dim_x`.
// Where the source does not say (an index computed from loaded data or a
// texture, a bound no guard names, a float or array __constant__ bound), the
// count is left empty with the reason.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analysis/file_symbols.hpp"

#include "analysis/symbolic_size.hpp"
#include "grammar/kernel_structure.hpp"

namespace gi::analysis {

struct PointerUse {
  std::string name;
  bool read = false, written = false;
  std::string atomic;        // the atomic's kind ("add", "max", "min", "and", "or", "xor", "sub") or "other"; "" for none
  std::string atomic_where;  // "line 9: atomicAdd(&sums[slice], value)"
  std::optional<SymbolicSize> count;
  std::string count_evidence;  // how the count follows: "line 7: x[i], i < n (line 6)"
  std::string refusal;         // why there is no count
  bool index_from_data = false;  // the refusal is an index computed from loaded values
  bool values_index = false;     // its loaded values are used in another buffer's index
  bool unused = false;           // the kernel never names it: count 1, no bytes moved
  // Whether a plain store (`p[i] = v`, `*(p + i) = v`) has an index whose
  // lower end is 0. A buffer only stored to, none of whose stores can reach
  // element 0, keeps elements the kernel never writes: it is inout, not out.
  bool store_reaches_zero = false;
  int first_line = 0;
  // A texture object parameter (cudaTextureObject_t): the element type its
  // tex1Dfetch<T> (or tex1D/tex2D/tex3D<T>) calls read ("float4"); "?" when
  // they read two types.
  std::string texture_type;
  // Read with tex1D/tex2D/tex3D<T>(t, x[, y[, z]]): a texture over a CUDA
  // array of that many dimensions (0: none). Its extent, width first: each
  // coordinate's largest texel plus one, as a count is (empty where one is
  // unknown; `count` is then empty too, with the refusal, else their
  // product). A coordinate of the form `(x + 0.5f) / (float)nx`, x < nx,
  // reads normalised coordinates across nx; a float coordinate drafts
  // linear filtering, whole ones point sampling (the host's sampler is not
  // in the kernel).
  unsigned texture_dimensions = 0;
  std::vector<SymbolicSize> texture_extent;
  bool texture_real_coordinates = false;
  bool texture_normalized = false;
  // Passed whole to a function (`f(texture<float, 2>(t), x, y)`, gi init's
  // port of a reference): that function reads it, so its coordinates, and
  // the sampler they suggest, are unknown here.
  std::string texture_helper;  // "'cubicTex2D'", "" when the kernel reads it itself
  // The values an if tests an element of it against, where two numbers
  // bound them (`v >= 0.0f && v < 256.0f`, v = reference[i]: 0 and 256, as
  // written): inputs drawn there fill a histogram's bins, and a little
  // wider reach both sides of each test. Empty where no test says.
  std::optional<std::pair<double, double>> tested_values;
  // What sizes a view of it as a wider type (`(float*)(bytes + y * pitch)`)
  // needs: a size that must be a multiple of a number, so each view's
  // element is aligned (pitch a multiple of 4 for floats over bytes); and
  // expressions that must be >= 0 so no two rows a store reaches overlap
  // (pitch - 4 * threads_x); and an index's lowest value where only sizes
  // keep it >= 0 (`hist[finish - 2]`, finish = (tid + 1) * bins: bins - 2,
  // so bins >= 2). Each with its evidence.
  struct SizeNeed {
    std::string name;       // the pitch: the size a multiple is for, or the fact's
    long long multiple = 0;  // 0 for a fact
    std::optional<SymbolicSize> at_least_zero;
    std::string row;         // a fact's row extent, which the pitch may be tied to ("4 * threads_x"); "" for none
    std::string evidence;
    bool lowest_index = false;  // the fact is an index's lowest value, not rows apart
  };
  std::vector<SizeNeed> size_needs;
  // The type of a view it is read or written through (`(float*)(bytes +
  // off)`: "float"), "" for none; the last one where several are.
  std::string viewed_as;
  std::string tested_values_evidence;  // "line 22: r = reference[pixel], 0 <= r < 256"
};

struct WorkItem {
  std::optional<SymbolicSize> bound[3];  // the global index's exclusive bound per axis (x, y, z)
  std::string variable[3];
  std::string evidence[3];
  // The branch site (fitness/instrument/branch_coverage.hpp: "if@L:C" for a
  // whole condition, "op@L:C" for an operand of && or ||) of the guard's
  // comparison and its direction that means "past the bound": on an axis
  // whose grid is exactly the bound (y, z) no thread takes it.
  std::string guard_branch[3];
  std::string guard_past_bound[3];  // "true" or "false"
  // Where no bound on x: why, when a guard names one gi cannot use (a
  // __constant__ variable): "the guard 'tid < c_N' (line 5) names no size ...".
  std::string refusal;
  // The line of a global index over blocks flattened from a 2-D grid
  // ((blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x), 0 for
  // none: it is the global index x on a grid of one row only.
  int flattened_rows_line = 0;
  // An axis with no guard anywhere whose global index the kernel still uses
  // (`out[i] = ...` with i = blockIdx.x * blockDim.x + threadIdx.x and no
  // `if (i < n)`): the kernel is written for a launch of exactly as many
  // threads as work items, the host's count. bound[a] is then the variable
  // exact_launch_variable(a), which the spec sets; on x it must be a
  // multiple of every block size, so the grid has no partial block.
  bool exact[3] = {false, false, false};
  // The line of a buffer index by blockIdx.x alone (one element per block:
  // a two-pass reduction's partial results), 0 for none. Its length and
  // contents depend on the block size, so the spec fixes it at kFixedBlock,
  // and the index is below ceil_div(bound x, kFixedBlock).
  int fixed_block_line = 0;
  // The block size a global index is written for (Rodinia's `bx *
  // NUMBER_THREADS + tx`, NUMBER_THREADS a macro of 512): the spec fixes the
  // block size at it; 0 where the index uses blockDim.x.
  long long written_block = 0;
  std::string written_block_evidence;
  // No global index and no block index anywhere (analysis/block_index_use.hpp):
  // every block would do the same work, so the grid is one block. Why, or "".
  std::string one_block_evidence;
};

// The block size a spec fixes where a buffer has one element per block.
extern const int kFixedBlock;

// The kernel's dynamic shared memory, `extern __shared__ T name[];`: its
// accesses bounded with threadIdx.x below the block size B and blockDim.x
// B, so that use.count (over B) times sizeof(T) is the launch's shared bytes.
struct DynamicShared {
  std::string name, type;
  PointerUse use;
};

// A `__shared__ T name[E];` in the kernel's body, E a whole number: its
// accesses bounded as the dynamic array's are, over the block size B. A
// block size whose use.count exceeds E would write past the array.
struct StaticShared {
  std::string name;
  long long extent = 0;
  int line = 0;
  PointerUse use;
};

struct ParameterUse {
  std::vector<PointerUse> pointers;  // in parameter order
  WorkItem work;
  std::optional<DynamicShared> dynamic_shared;
  std::vector<StaticShared> static_shared;
  // The file's array __constant__s the kernel body indexes, as pointers: the
  // count their indices need, which the declared length must hold.
  std::vector<PointerUse> constant_arrays;
  // The workload variables of real parameters and __constant__s (`spacing_x`
  // of a float3 spacing) that may divide a coordinate (Analyser::real_divisor).
  std::set<std::string> real_sizes;
};

// `headers`: the local headers' macros, where the caller read them
// (analysis/file_symbols.hpp). `exact_names`: per axis, the size that counts
// an exact launch's threads where the user names one (the host launches
// nelr threads), instead of exact_launch_variable(axis).
ParameterUse analyse_parameter_use(const grammar::ParsedKernel& k, const grammar::Function& kernel,
                                   const IncludedHeaders& headers = {},
                                   const std::map<int, std::string>& exact_names = {});

// Components of an integer vector type (int2..int4, uint2..uint4), 0 for
// any other: a by-value parameter or __constant__ of one is sizes, one per
// component, named by vector_component_name ("dim", 'x' -> "dim_x").
int integer_vector_size(const std::string& type);
// The workload variable that counts an exact launch's threads on an axis:
// "threads_x", "threads_y", "threads_z".
std::string exact_launch_variable(int axis);
std::string vector_component_name(const std::string& vector, char field);
// The workload variable of a member of a struct passed by value: "p_n" for
// `p.n` (a nested member's path already joined by '_').
std::string record_member_name(const std::string& record, const std::string& member);

}  // namespace gi::analysis

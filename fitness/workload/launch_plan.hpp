#pragma once
// The contract between a kernel spec (what to run, on which data, with
// which expected answer) and the GPU runner (how to run, check and time it).
// Plain value types only: no CUDA types, so spec code and tests build and run
// on a machine without a GPU.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gi::fitness {

enum class ParamRole { In, Out, InOut, Scalar };

// CUDA's vector types of 32-bit components (float3, int2, uint3, ...) have
// their components' kind. U8 ... I16 are 8- and 16-bit integers (an image of
// `unsigned char` or `short`), U8x4 CUDA's uchar4. From Bool on, the types
// are for by-value parameters and __constant__ scalars only: Bool (one byte,
// 0 or 1), and the 64-bit integers (`long`, `size_t`: a count passed by
// value; `ulong2`, NiftyReg's voxel numbers), whose buffers the GPU's output
// check, which reads 32-bit words, cannot compare yet.
enum class ElementType {
  F32, F64, I32, U32, F32x2, F32x4, I32x4, F32x3, I32x2, I32x3, U32x2, U32x3, U32x4,
  U8, I8, U16, I16, U8x4,
  Bool, I64, U64, I64x2, U64x2
};
// Whether a buffer (or an array __constant__) may hold the type.
bool element_is_buffer_type(ElementType t);
// Whether the components are int, unsigned (else float or double).
bool element_is_signed_int(ElementType t);
bool element_is_unsigned_int(ElementType t);
// Whether a linear CUDA texture can hold the type: one, two or four 32-bit words.
bool fits_linear_texture(ElementType t);
std::size_t element_bytes(ElementType t);
std::size_t element_components(ElementType t);  // floats/ints per element (float4 -> 4)
std::size_t component_bytes(ElementType t);     // bytes per component (uchar4 -> 1)
// A buffer element narrower than a 32-bit word (an 8- or 16-bit integer; not Bool, a scalar): its
// output buffer is filled with kSubWordFillByte, not NaN words.
bool element_is_sub_word(ElementType t);
// The values one component of an 8- or 16-bit integer type holds, lowest
// and highest: what a buffer's distribution and a scalar's value must stay within.
struct IntegerRange {
  double lo, hi;
};
IntegerRange narrow_integer_range(ElementType t);
bool element_is_float(ElementType t);

// A texture over a CUDA array rather than linear memory: the kernel reads it
// with tex1D/tex2D/tex3D<T>(t, x[, y[, z]]) at coordinates, through a
// sampler (filter, address mode, normalised coordinates), as NiftyReg's
// resampling reads its floating image. The buffer's element (x, y, z) is
// element x + width * (y + height * z) of its data.
enum class TextureFilter : std::uint8_t { Point, Linear };
// Clamp: a coordinate outside the array reads its edge; border: it reads zero.
// (CUDA's wrap and mirror need normalised coordinates; gi draws none.)
enum class TextureAddress : std::uint8_t { Clamp, Border };
struct TextureArray {
  unsigned dimensions = 0;  // 0: no array (a linear texture, tex1Dfetch); else 1, 2 or 3
  std::array<std::size_t, 3> extent{1, 1, 1};  // width, height, depth (1 past `dimensions`)
  TextureFilter filter = TextureFilter::Point;
  TextureAddress address = TextureAddress::Clamp;
  bool normalized = false;  // coordinates in [0, 1) across each extent
};
// Whether a CUDA array can hold the type with linear filtering: float, float2, float4.
bool filters_linearly(ElementType t);

// One pointer parameter of the kernel.
struct BufferArg {
  std::string name;
  ParamRole role = ParamRole::In;
  ElementType type = ElementType::F32;
  std::size_t count = 0;             // elements
  std::vector<std::byte> initial;    // In/InOut: the input bytes (count * element_bytes)
  // An In buffer the kernel reads through a texture object (a
  // cudaTextureObject_t parameter, tex1Dfetch<T>): the runner passes a
  // texture over the buffer instead of its address.
  bool texture = false;
  // A texture buffer over a CUDA array (array.dimensions > 0) instead of
  // linear memory; its count is the product of the extent.
  TextureArray array{};
};

// One by-value parameter (int, float, ...): its bytes as the kernel sees them.
struct ScalarArg {
  std::string name;
  std::vector<std::byte> bytes;
};

struct LaunchPlan {
  std::string entry;                 // extern "C" kernel name
  std::vector<BufferArg> buffers;
  std::vector<ScalarArg> scalars;
  // Kernel parameters in declaration order: {is_buffer, index into buffers/scalars}.
  std::vector<std::pair<bool, std::size_t>> params;
  // The module's __constant__ variables to set before the launch (as a host
  // does with cudaMemcpyToSymbol): each one's name and bytes.
  std::vector<ScalarArg> constants;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  std::size_t dynamic_shared_bytes = 0;
  // Bytes the kernel must move at least (read inputs once, write outputs once),
  // for the fraction of the memory-bandwidth floor.
  double min_bytes_moved = 0;
};

// The reference answer for one Out/InOut buffer, component by component
// (a float4 buffer has 4 values per element), in double precision.
struct ExpectedOutput {
  std::string buffer;                   // BufferArg::name
  std::vector<double> values;           // count * components values
  // Elements the kernel must write; nullopt means all. Elements not listed
  // must be left untouched (still the NaN fill) - a variant writes only where
  // the seed writes.
  std::optional<std::vector<std::uint32_t>> written_elements;
  // Components to compare (e.g. x,y,z of a float4 whose w is unspecified); empty: all.
  std::vector<int> checked_components;
};

struct Tolerance {
  double abs = 1e-5;
  double rel = 1e-4;  // an element passes if |got-ref| <= abs + rel*|ref|
};

enum class RunStatus { Ok, WrongOutput, LaunchError, Timeout, IllegalAddress, Trap, GuardViolation,
                       InputModified, LoadError };
std::string to_string(RunStatus s);

struct CheckReport {
  RunStatus status = RunStatus::Ok;
  double max_abs_error = 0, max_rel_error = 0, rms_error = 0;
  std::size_t values_checked = 0;
  std::string message;  // for failures: which buffer, which element, got vs expected
  // fitness::OutputDigest of every Out/InOut buffer (plan order) after the
  // checked run: two runs with the same digest left bit-identical outputs.
  // Empty when the run did not get as far as reading the outputs back.
  std::string output_digest;
  bool ok() const { return status == RunStatus::Ok; }
};

struct TimingConfig {
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 200;
  double target_relative_spread = 0.01;  // stop when the median's relative spread is below this
  double budget_seconds = 2.0;           // per candidate
  bool flush_l2 = true;
  // Queue a spin kernel before the start event when the kernel is shorter
  // than this, so launch latency stays out of the sample.
  double spin_below_ms = 0.02;
  bool clock_ticks = false;              // also read in-kernel clock64/globaltimer spans (if instrumented)
};

// In-kernel clock ticks of an instrumented variant (fitness/instrument/clock_instrument.hpp),
// medians over the samples.
struct ClockTicks {
  std::vector<double> samples;  // sum over blocks of each block's clock64 span
  double median_ticks = 0;
  double median_span_ms = 0;    // latest block end - earliest block start (%globaltimer)
  double sm_mhz = 0;            // SM clock: block ticks / block nanoseconds
};

struct TimingResult {
  std::vector<double> samples_ms;
  double median_ms = 0;
  double relative_spread = 0;  // half the 95% CI of the median over the median (order-statistic CI)
  double min_ms = 0, max_ms = 0;
  bool converged = false;      // spread target met before the budget ran out
};

}  // namespace gi::fitness

#include "fitness/workload/workload_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "fitness/workload/random_workload.hpp"
#include "fitness/workload/reference_cache.hpp"

namespace gi::fitness {

namespace {

// The key under which a seed reference's spread is cached with its outputs
// (no parameter can be named so).
constexpr const char* kSpreadKey = "#run_to_run_spread";

[[noreturn]] void fail(const KernelSpec& spec, const std::string& path, const std::string& what) {
  throw std::runtime_error(spec.display_path + ": " + path + ": " + what);
}

double evaluate(const KernelSpec& spec, const Expression& e, const Variables& variables, const std::string& path) {
  try {
    return e.evaluate(variables);
  } catch (const std::runtime_error& err) {
    fail(spec, path, err.what());
  }
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A whole number in [lo, hi], or an error naming the field.
std::int64_t whole(const KernelSpec& spec, const Expression& e, const Variables& variables, const std::string& path,
                    double lo, double hi, const char* what) {
  const double v = evaluate(spec, e, variables, path);
  if (v != std::floor(v) || v < lo || v > hi)
    fail(spec, path, "'" + e.text() + "' gave " + number_text(v) + ": expected " + what + " (a whole number in " +
                         number_text(lo) + ".." + number_text(hi) + ")");
  return static_cast<std::int64_t>(v);
}

std::size_t element_count(const KernelSpec& spec, const ParamSpec& p, const Variables& variables) {
  // 2^34 elements is far beyond any GPU buffer we would allocate for a test.
  return static_cast<std::size_t>(
      whole(spec, p.count, variables, p.json_path + ".count", 0, 17179869184.0, "an element count"));
}

// A texture buffer's CUDA array on this workload: its extent, each within
// what sm_90 arrays hold, whose product must be the buffer's count.
TextureArray texture_array(const KernelSpec& spec, const ParamSpec& p, const Variables& variables, std::size_t count) {
  TextureArray array = p.sampler;
  if (p.texture_extent.empty()) return array;
  // cudaMalloc3DArray's limits on sm_90: 1-D 131072; 2-D 131072 x 65536; 3-D 16384 each way.
  const unsigned dims = array.dimensions;
  const double limits[3] = {dims == 3 ? 16384.0 : 131072.0, dims == 3 ? 16384.0 : 65536.0, 16384.0};
  std::size_t product = 1;
  std::string shape;
  for (unsigned d = 0; d < dims; ++d) {
    const std::string path = p.json_path + ".texture.extent[" + std::to_string(d) + "]";
    array.extent[d] = static_cast<std::size_t>(
        whole(spec, p.texture_extent[d], variables, path, 1, limits[d], "a CUDA array's extent"));
    product *= array.extent[d];
    shape += (d > 0 ? " x " : "") + std::to_string(array.extent[d]);
  }
  if (product != count)
    fail(spec, p.json_path + ".texture.extent", "the array's extent " + shape + " holds " + std::to_string(product) +
                                                    " elements, but count '" + p.count.text() + "' is " +
                                                    std::to_string(count));
  return array;
}

// An 8- or 16-bit integer (one component of a uchar4 too), range-checked.
void narrow_integer(const KernelSpec& spec, const ParamSpec& p, const Expression& e, const Variables& variables,
                    const std::string& path, std::byte* out) {
  const std::size_t bytes = component_bytes(p.type);
  const bool is_signed = element_is_signed_int(p.type);
  const auto [bottom, top] = narrow_integer_range(p.type);
  const std::int64_t v = whole(spec, e, variables, path, bottom, top,
                               bytes == 1 ? (is_signed ? "an 8-bit int" : "an 8-bit unsigned")
                                          : (is_signed ? "a 16-bit int" : "a 16-bit unsigned"));
  const auto bits = static_cast<std::uint16_t>(v);  // two's complement, low bytes first
  std::memcpy(out, &bits, bytes);
}

// One component of a vector scalar (int3, float2, uchar4, ...) or of a
// struct by value, of type `type`, at `out`.
void vector_component(const KernelSpec& spec, const ParamSpec& p, ElementType type, std::size_t c,
                      const Variables& variables, std::byte* out) {
  const std::string path = p.json_path + ".value[" + std::to_string(c) + "]";
  const Expression& e = p.components.at(c);
  if (component_bytes(type) < 4) {
    narrow_integer(spec, p, e, variables, path, out);
    return;
  }
  if (type == ElementType::F64) {
    const double v = evaluate(spec, e, variables, path);
    std::memcpy(out, &v, 8);
    return;
  }
  // 64-bit integer components (ulong2, a struct's size_t): whole numbers a double holds exactly.
  if (type == ElementType::I64 || type == ElementType::I64x2) {
    const std::int64_t v = whole(spec, e, variables, path, -9007199254740992.0, 9007199254740992.0, "an int64");
    std::memcpy(out, &v, 8);
    return;
  }
  if (type == ElementType::U64 || type == ElementType::U64x2) {
    const auto v = static_cast<std::uint64_t>(whole(spec, e, variables, path, 0, 9007199254740992.0, "a uint64"));
    std::memcpy(out, &v, 8);
    return;
  }
  if (element_is_signed_int(type)) {
    const auto v = static_cast<std::int32_t>(whole(spec, e, variables, path, -2147483648.0, 2147483647.0, "an int"));
    std::memcpy(out, &v, 4);
  } else if (element_is_unsigned_int(type)) {
    const auto v = static_cast<std::uint32_t>(whole(spec, e, variables, path, 0, 4294967295.0, "an unsigned"));
    std::memcpy(out, &v, 4);
  } else {
    const double d = evaluate(spec, e, variables, path);
    if (std::fabs(d) > std::numeric_limits<float>::max())
      fail(spec, path, "'" + e.text() + "' gave " + number_text(d) + ", which does not fit a float");
    const auto v = static_cast<float>(d);
    std::memcpy(out, &v, 4);
  }
}

std::vector<std::byte> scalar_bytes(const KernelSpec& spec, const ParamSpec& p, const Variables& variables) {
  const std::string path = p.json_path + ".value";
  if (!p.record_fields.empty()) {  // a struct by value: each field at its offset, the padding zero
    std::vector<std::byte> bytes(p.record_bytes);
    for (std::size_t c = 0; c < p.record_fields.size(); ++c)
      vector_component(spec, p, p.record_fields[c].type, c, variables, bytes.data() + p.record_fields[c].offset);
    return bytes;
  }
  std::vector<std::byte> bytes(element_bytes(p.type));
  if (element_components(p.type) > 1) {
    for (std::size_t c = 0; c < element_components(p.type); ++c)
      vector_component(spec, p, p.type, c, variables, bytes.data() + component_bytes(p.type) * c);
    return bytes;
  }
  if (element_is_sub_word(p.type)) {
    narrow_integer(spec, p, p.value, variables, path, bytes.data());
    return bytes;
  }
  switch (p.type) {
    case ElementType::I32: {
      const auto v =
          static_cast<std::int32_t>(whole(spec, p.value, variables, path, -2147483648.0, 2147483647.0, "an int"));
      std::memcpy(bytes.data(), &v, 4);
      break;
    }
    case ElementType::U32: {
      const auto v = static_cast<std::uint32_t>(whole(spec, p.value, variables, path, 0, 4294967295.0, "an unsigned"));
      std::memcpy(bytes.data(), &v, 4);
      break;
    }
    case ElementType::F32: {
      const double d = evaluate(spec, p.value, variables, path);
      if (std::fabs(d) > std::numeric_limits<float>::max())
        fail(spec, path, "'" + p.value.text() + "' gave " + number_text(d) + ", which does not fit a float");
      const auto v = static_cast<float>(d);
      std::memcpy(bytes.data(), &v, 4);
      break;
    }
    case ElementType::F64: {
      const double v = evaluate(spec, p.value, variables, path);
      std::memcpy(bytes.data(), &v, 8);
      break;
    }
    // Whole numbers a double holds exactly (2^53), as every expression's value is one.
    case ElementType::I64: {
      const std::int64_t v = whole(spec, p.value, variables, path, -9007199254740992.0, 9007199254740992.0, "an int64");
      std::memcpy(bytes.data(), &v, 8);
      break;
    }
    case ElementType::U64: {
      const auto v = static_cast<std::uint64_t>(whole(spec, p.value, variables, path, 0, 9007199254740992.0, "a uint64"));
      std::memcpy(bytes.data(), &v, 8);
      break;
    }
    case ElementType::Bool: {
      const auto v = whole(spec, p.value, variables, path, 0, 1, "a bool (0 or 1)");
      bytes[0] = static_cast<std::byte>(v);
      break;
    }
    default:
      fail(spec, p.json_path + ".type", "no scalar of type '" + p.type_name + "'");
  }
  return bytes;
}

void check_inputs(const KernelSpec& spec, const Workload& workload, const std::string& generator_note) {
  for (const auto& [name, bytes] : workload.inputs) {
    const ParamSpec* p = spec.find_parameter(name);
    if ((p == nullptr || (p->role != ParamRole::In && p->role != ParamRole::InOut)) && !spec.find_constant_array(name))
      fail(spec, "parameters",
           generator_note + " gave an input '" + name + "' that is no in/inout parameter or __constant__ array");
  }
}

// A constant's bytes: a scalar's value, or an array's elements as the
// generator drew them (count elements of its type).
ScalarArg constant_bytes(const KernelSpec& spec, const ParamSpec& c, const Workload& workload) {
  if (!c.constant_array) return ScalarArg{c.name, scalar_bytes(spec, c, workload.variables)};
  const auto it = workload.inputs.find(c.name);
  if (it == workload.inputs.end())
    fail(spec, c.json_path, "the generator gave no values for the __constant__ array '" + c.name +
                                "' (the random generator draws them from inputs." + c.name + ")");
  const std::size_t expected = element_count(spec, c, workload.variables) * element_bytes(c.type);
  if (it->second.size() != expected)
    fail(spec, c.json_path, "the generator gave " + std::to_string(it->second.size()) + " bytes for '" + c.name +
                                "', expected " + std::to_string(expected));
  return ScalarArg{c.name, it->second};
}

LaunchPlan build(const KernelSpec& spec, Workload* movable, const Workload& workload, unsigned block_size) {
  LaunchPlan plan;
  plan.entry = spec.entry;
  check_inputs(spec, workload, "the generator");
  for (const ParamSpec& p : spec.parameters) {
    if (p.role == ParamRole::Scalar) {
      plan.params.emplace_back(false, plan.scalars.size());
      plan.scalars.push_back(ScalarArg{p.name, scalar_bytes(spec, p, workload.variables)});
      continue;
    }
    BufferArg b;
    b.name = p.name;
    b.role = p.role;
    b.type = p.type;
    b.texture = p.texture;
    b.count = element_count(spec, p, workload.variables);
    b.array = texture_array(spec, p, workload.variables, b.count);
    if (p.role == ParamRole::In || p.role == ParamRole::InOut) {
      const auto it = workload.inputs.find(p.name);
      if (it == workload.inputs.end())
        fail(spec, p.json_path, "the generator gave no input bytes for '" + p.name + "'");
      const std::size_t expected = b.count * element_bytes(p.type);
      if (it->second.size() != expected)
        fail(spec, p.json_path, "the generator gave " + std::to_string(it->second.size()) + " bytes for '" + p.name +
                                    "', expected " + std::to_string(expected) + " (count '" + p.count.text() +
                                    "' = " + std::to_string(b.count) + " elements of " + p.type_name + ")");
      b.initial = movable != nullptr ? std::move(movable->inputs.at(p.name)) : it->second;
    }
    plan.params.emplace_back(true, plan.buffers.size());
    plan.buffers.push_back(std::move(b));
  }
  for (const ParamSpec& c : spec.constants) plan.constants.push_back(constant_bytes(spec, c, workload));
  set_launch_geometry(plan, spec, workload.variables, block_size);
  plan.min_bytes_moved = min_bytes(spec, workload);
  return plan;
}

std::vector<std::uint32_t> written_indices(const KernelSpec& spec, const ParamSpec& out, std::size_t count,
                                           const Workload& workload) {
  const auto it = workload.inputs.find(out.written_indices);
  if (it == workload.inputs.end())
    fail(spec, out.json_path + ".written_indices",
         "the generator gave no input '" + out.written_indices + "' listing the written elements");
  const std::size_t n = it->second.size() / 4;
  std::vector<std::uint32_t> indices(n);
  std::memcpy(indices.data(), it->second.data(), n * 4);
  for (std::size_t i = 0; i < n; ++i)
    if (indices[i] >= count)
      fail(spec, out.json_path + ".written_indices",
           "'" + out.written_indices + "'[" + std::to_string(i) + "] = " +
               std::to_string(static_cast<std::int32_t>(indices[i])) + " is outside '" + out.name + "' (" +
               std::to_string(count) + " elements)");
  return indices;
}

// remap traded the kernel's thread axes a and b: the threads along a now
// take the items the threads along b took. Each axis gets the blocks that
// cover the other's threads (rounded up: the kernel guards both indices),
// the block's shape unchanged.
void swap_grid_axes(const KernelSpec& spec, LaunchPlan& plan, const std::string& pair, const double (&limit)[3]) {
  auto axis = [&](char c) {
    if (c < 'x' || c > 'z' || pair.size() != 2 || pair[0] == pair[1])
      fail(spec, "launch", "remap's axes '" + pair + "' are not two of x, y and z");
    return static_cast<int>(c - 'x');
  };
  const int a = axis(pair[0]), b = axis(pair[1]);
  const std::uint64_t threads_a = std::uint64_t{plan.grid[a]} * plan.block[a];
  const std::uint64_t threads_b = std::uint64_t{plan.grid[b]} * plan.block[b];
  const std::uint64_t grid_a = (threads_b + plan.block[a] - 1) / plan.block[a];
  const std::uint64_t grid_b = (threads_a + plan.block[b] - 1) / plan.block[b];
  for (const auto& [i, blocks] : {std::pair{a, grid_a}, std::pair{b, grid_b}})
    if (static_cast<double>(blocks) > limit[i])
      fail(spec, "launch.grid[" + std::to_string(i) + "]",
           "remap:" + pair + " needs " + std::to_string(blocks) + " blocks along " + std::string(1, "xyz"[i]) +
               ", beyond the limit of " + std::to_string(static_cast<std::uint64_t>(limit[i])));
  plan.grid[a] = static_cast<unsigned>(grid_a);
  plan.grid[b] = static_cast<unsigned>(grid_b);
}

}  // namespace

Workload generate_workload(const KernelSpec& spec, const WorkloadSpec& workload, std::uint64_t seed) {
  if (workload.generator == kRandomGenerator) return random_workload(spec, workload, seed);
  GeneratorFn generator;
  try {
    generator = find_generator(workload.generator);
  } catch (const std::runtime_error& e) {
    fail(spec, workload.json_path + ".generator", e.what());
  }
  try {
    return generator(workload.variables, seed);
  } catch (const std::runtime_error& e) {
    fail(spec, workload.json_path + ".variables", e.what());
  }
}

LaunchPlan launch_plan_shape(const KernelSpec& spec, const Variables& variables, unsigned block_size,
                             const grammar::LaunchEffect& effect) {
  LaunchPlan plan;
  plan.entry = spec.entry;
  for (const ParamSpec& p : spec.parameters) {
    if (p.role == ParamRole::Scalar) {
      plan.params.emplace_back(false, plan.scalars.size());
      plan.scalars.push_back(ScalarArg{p.name, scalar_bytes(spec, p, variables)});
      continue;
    }
    plan.params.emplace_back(true, plan.buffers.size());
    const std::size_t count = element_count(spec, p, variables);
    plan.buffers.push_back(BufferArg{p.name, p.role, p.type, count, {}, p.texture, texture_array(spec, p, variables, count)});
  }
  for (const ParamSpec& c : spec.constants)  // an array's shape: its bytes, zero
    plan.constants.push_back(c.constant_array ? ScalarArg{c.name, std::vector<std::byte>(element_count(spec, c, variables) *
                                                                                        element_bytes(c.type))}
                                              : ScalarArg{c.name, scalar_bytes(spec, c, variables)});
  set_launch_geometry(plan, spec, variables, block_size, effect);
  return plan;
}

LaunchPlan build_launch_plan(const KernelSpec& spec, const Workload& workload, unsigned block_size) {
  return build(spec, nullptr, workload, block_size);
}

LaunchPlan build_launch_plan(const KernelSpec& spec, Workload&& workload, unsigned block_size) {
  return build(spec, &workload, workload, block_size);
}

void set_launch_geometry(LaunchPlan& plan, const KernelSpec& spec, const std::map<std::string, double>& variables,
                         unsigned block_size, const grammar::LaunchEffect& effect) {
  if (block_size == 0) block_size = spec.default_block_size;
  if (variables.count("B") != 0)
    fail(spec, "launch", "the workload defines a variable 'B', which names the block size in launch expressions");
  Variables v = variables;
  v["B"] = block_size;
  // The seed's switch values, then the variant's: a launch expression may
  // read a switch (items per thread) that the variant leaves at its default.
  std::map<std::string, std::string> switches = spec.switch_defaults;
  for (const auto& [name, value] : effect.switches) switches[name] = value;
  for (const auto& [name, value] : switches) {
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') continue;  // a switch that is not a number is no launch variable
    if (variables.count(name) != 0)
      fail(spec, "switches", "the workload defines a variable '" + name + "', which names a switch in launch expressions");
    v[name] = number;
  }
  if (effect.coarsen < 1) fail(spec, "launch", "coarsening factor " + std::to_string(effect.coarsen) + " is below 1");
  if (effect.group < 1) fail(spec, "launch", "group size " + std::to_string(effect.group) + " is below 1");
  static const double kGridLimit[3] = {2147483647.0, 65535.0, 65535.0};
  std::uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    const std::string bi = "launch.block[" + std::to_string(i) + "]";
    const std::string gi = "launch.grid[" + std::to_string(i) + "]";
    plan.block[i] = static_cast<unsigned>(whole(spec, spec.block[i], v, bi, 1, 1024, "a block dimension"));
    plan.grid[i] = static_cast<unsigned>(whole(spec, spec.grid[i], v, gi, 1, kGridLimit[i], "a grid dimension"));
    // Each thread of a coarsened variant handles `coarsen` items of the x extent.
    if (i == 0) plan.grid[0] = (plan.grid[0] + static_cast<unsigned>(effect.coarsen) - 1) / static_cast<unsigned>(effect.coarsen);
    // A group of `group` threads shares each item of the x extent (warp_per_item).
    if (i == 0 && effect.group != 1) {
      const double grown = static_cast<double>(plan.grid[0]) * effect.group;
      if (grown > kGridLimit[0])
        fail(spec, gi, "the grid's x extent " + std::to_string(plan.grid[0]) + " times the group size " +
                           std::to_string(effect.group) + " is beyond the limit of 2147483647");
      plan.grid[0] = static_cast<unsigned>(grown);
    }
    threads *= plan.block[i];
  }
  // A group must not straddle two blocks (its lanes shuffle within a warp).
  if (effect.group != 1 && plan.block[0] % static_cast<unsigned>(effect.group) != 0)
    fail(spec, "launch.block[0]", "a block of " + std::to_string(plan.block[0]) +
                                      " threads along x is no multiple of the group size " +
                                      std::to_string(effect.group) + " (warp_per_item)");
  if (threads > 1024)
    fail(spec, "launch.block", "the block has " + std::to_string(threads) + " threads: at most 1024");
  // A grid-stride loop covers every item with at most grid_threads threads.
  if (effect.grid_threads != 0)
    plan.grid[0] = std::min<unsigned>(plan.grid[0], static_cast<unsigned>((effect.grid_threads + threads - 1) / threads));
  if (!effect.swap_axes.empty()) swap_grid_axes(spec, plan, effect.swap_axes, kGridLimit);
  plan.dynamic_shared_bytes = static_cast<std::size_t>(whole(spec, spec.shared_bytes, v, "launch.shared_bytes", 0, 232448.0, "a shared memory size in bytes"));
  if (!effect.private_buffer.empty()) {
    // The kernel reads the size it was given; a copy too large for a block
    // gets none, and its updates go to global memory as the seed's did.
    const ParamSpec* p = spec.find_parameter(effect.private_buffer);
    if (p == nullptr || p->role == ParamRole::Scalar)
      fail(spec, "parameters", "a private copy of '" + effect.private_buffer + "', which is no buffer parameter");
    const std::size_t bytes = element_count(spec, *p, variables) * effect.private_element_bytes;
    plan.dynamic_shared_bytes = bytes <= grammar::kPrivateSharedLimit ? bytes : 0;
  }
  if (!effect.staged.empty()) {
    // Each thread's records of the staged buffers, one buffer after another
    // at 16-byte boundaries (grammar/edits/stage.cpp). The copy-out walks
    // blockDim.x items: a block along x only.
    if (plan.block[1] != 1 || plan.block[2] != 1)
      fail(spec, "launch.block", "stage writes records of a block along x; this block has " + std::to_string(plan.block[1]) +
                                     " x " + std::to_string(plan.block[2]) + " threads in y and z");
    std::size_t bytes = 0;
    for (const auto& [buffer, per_thread] : effect.staged) bytes += (per_thread * std::size_t{plan.block[0]} + 15) / 16 * 16;
    plan.dynamic_shared_bytes += bytes;
  }
}

std::vector<ExpectedOutput> expected_outputs(const KernelSpec& spec, const Workload& workload,
                                             const ReferenceOutputs& reference) {
  std::vector<ExpectedOutput> out;
  for (const auto& [name, values] : reference) {
    const ParamSpec* p = spec.find_parameter(name);
    if (p == nullptr || (p->role != ParamRole::Out && p->role != ParamRole::InOut))
      fail(spec, "entry", "the reference of '" + spec.entry + "' gave values for '" + name +
                              "', which is no out/inout parameter");
  }
  for (const ParamSpec& p : spec.parameters) {
    if (p.role != ParamRole::Out && p.role != ParamRole::InOut) continue;
    const std::size_t count = element_count(spec, p, workload.variables);
    const auto it = reference.find(p.name);
    if (it == reference.end())
      fail(spec, p.json_path, "the reference of '" + spec.entry + "' gave no values for '" + p.name + "'");
    const std::size_t expected = count * element_components(p.type);
    if (it->second.size() != expected)
      fail(spec, p.json_path, "the reference of '" + spec.entry + "' gave " + std::to_string(it->second.size()) +
                                  " values for '" + p.name + "', expected " + std::to_string(expected));
    ExpectedOutput e;
    e.buffer = p.name;
    e.values = it->second;
    if (!p.written_all) e.written_elements = written_indices(spec, p, count, workload);
    e.checked_components = p.checked_components;
    out.push_back(std::move(e));
  }
  return out;
}

double min_bytes(const KernelSpec& spec, const Workload& workload) {
  const double v = evaluate(spec, spec.min_bytes, workload.variables, "min_bytes");
  if (v < 0) fail(spec, "min_bytes", "'" + spec.min_bytes.text() + "' gave " + number_text(v) + ": expected >= 0");
  return v;
}

std::size_t checked_values(const ExpectedOutput& expected, std::size_t components) {
  const std::size_t elements =
      expected.written_elements ? expected.written_elements->size() : expected.values.size() / components;
  const std::size_t per_element = expected.checked_components.empty() ? components : expected.checked_components.size();
  return elements * per_element;
}

std::size_t checked_values(const LaunchPlan& plan, const std::vector<ExpectedOutput>& expected) {
  std::size_t total = 0;
  for (const ExpectedOutput& e : expected)
    for (const BufferArg& b : plan.buffers)
      if (b.name == e.buffer) total += checked_values(e, element_components(b.type));
  return total;
}

std::size_t input_values(const LaunchPlan& plan) {
  std::size_t total = 0;
  for (const BufferArg& b : plan.buffers)
    if (b.role == ParamRole::In || b.role == ParamRole::InOut) total += b.count * element_components(b.type);
  return total;
}

PreparedWorkload prepare_workload(const KernelSpec& spec, const std::string& which, std::uint64_t seed,
                                  const std::optional<std::filesystem::path>& cache_dir, unsigned block_size) {
  const WorkloadSpec& ws = spec.workload(which);
  PreparedWorkload prepared;
  prepared.which = which;
  prepared.generator = ws.generator;
  // Training workloads take the run's seed (fresh every generation), each
  // check workload a different one; held-out workloads their own plus `seed`.
  const bool training = which == "train" || which.rfind("train:", 0) == 0;
  const std::uint64_t check_index = training && which != "train" ? std::stoull(which.substr(6)) : 0;
  prepared.seed = training ? seed + check_index * 0x9E3779B97F4A7C15ull : ws.seed + seed;
  prepared.tolerance = spec.tolerance_of(ws);

  Workload workload = generate_workload(spec, ws, prepared.seed);
  prepared.variables = workload.variables;
  std::function<ReferenceOutputs()> compute;
  std::string reference_name = spec.entry;
  if (spec.reference_is_seed) {
    SeedReferenceProvider seed_reference;
    try {
      seed_reference = find_seed_reference(spec.entry);
    } catch (const std::runtime_error& e) {
      fail(spec, "reference", e.what());
    }
    reference_name += "@" + seed_reference.key;
    // The spread travels through the cache as an extra output.
    compute = [&, run = seed_reference.run] {
      MeasuredReference m = run(workload);
      m.outputs[kSpreadKey] = {m.spread_abs};
      return m.outputs;
    };
  } else {
    ReferenceFn reference;
    try {
      reference = find_reference(spec.entry);
    } catch (const std::runtime_error& e) {
      fail(spec, "entry", e.what());
    }
    compute = [&, reference] { return reference(workload); };
  }
  ReferenceOutputs outputs;
  if (cache_dir) {
    const ReferenceCache cache(*cache_dir);
    const std::string key =
        ReferenceCache::key(reference_name, ws.generator, ws.variables, prepared.seed, workload_digest(workload));
    outputs = cache.get_or_compute(key, compute, &prepared.reference_cache_hit);
  } else {
    outputs = compute();
  }
  if (const auto spread = outputs.find(kSpreadKey); spread != outputs.end()) {
    // The seed's own run-to-run spread widens the float tolerance: a variant
    // is held to what the seed itself repeats to.
    prepared.reference_spread_abs = spread->second.at(0);
    prepared.tolerance.abs += 2 * prepared.reference_spread_abs;
    outputs.erase(spread);
  }
  prepared.expected = expected_outputs(spec, workload, outputs);
  outputs.clear();
  prepared.plan = build_launch_plan(spec, std::move(workload), block_size);
  prepared.checked_values = checked_values(prepared.plan, prepared.expected);
  return prepared;
}

}  // namespace gi::fitness

#pragma once
// The seed library's plug-in point: input generators and CPU references,
// registered by name from seeds/<family>/<kernel>/reference.cpp through static
// registration objects, so a kernel is added by adding a folder. The engine
// only looks them up by the names a spec.json gives.
//
// Static registration runs only for object files that are linked: the seeds
// are built as an OBJECT library (gi_seeds) that every executable needing
// them links directly.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gi::fitness {

// One generated workload: the derived variables that spec expressions read
// (image sizes, active voxel number, ...) and the bytes of every In/InOut
// buffer, keyed by kernel parameter name.
struct Workload {
  std::map<std::string, double> variables;
  std::map<std::string, std::vector<std::byte>> inputs;
};

// Output parameter name -> its values in double, component by component
// (count * components; NaN where the kernel does not write).
using ReferenceOutputs = std::map<std::string, std::vector<double>>;

// Throws std::runtime_error naming the generator and the offending variable.
using GeneratorFn = Workload (*)(const nlohmann::json& variables, std::uint64_t seed);
using ReferenceFn = ReferenceOutputs (*)(const Workload&);

// Registering a name twice is not an error at static-initialisation time
// (nothing could report it there); looking that name up throws.
void register_generator(const std::string& name, GeneratorFn fn);
void register_reference(const std::string& entry, ReferenceFn fn);

// Throw std::runtime_error naming the unknown name and the known ones.
GeneratorFn find_generator(const std::string& name);
ReferenceFn find_reference(const std::string& entry);

// The seed as its own reference (spec "reference": "seed"): for a user's
// kernel with no CPU reference, the expected outputs of a workload are the
// seed's own, run on a GPU, with the run-to-run spread of those runs (float
// atomics may sum in another order each time), or on the CPU emulator for
// gi emulate. Those sides live above this layer (gi/evaluate/seed_reference.hpp,
// gi/library/seed_emulation.hpp) and are installed per entry at run time; `key` names the seed's source and launch for the reference cache.
struct MeasuredReference {
  ReferenceOutputs outputs;
  double spread_abs = 0;  // largest |difference| between the seed's runs
};
struct SeedReferenceProvider {
  std::string key;
  std::function<MeasuredReference(const Workload&)> run;
};
void set_seed_reference(const std::string& entry, SeedReferenceProvider provider);
// Throws std::runtime_error when none is installed for `entry`.
SeedReferenceProvider find_seed_reference(const std::string& entry);

bool has_generator(const std::string& name);
bool has_reference(const std::string& entry);
std::vector<std::string> generator_names();
std::vector<std::string> reference_names();

}  // namespace gi::fitness

#define GI_REGISTRY_CONCAT_INNER(a, b) a##b
#define GI_REGISTRY_CONCAT(a, b) GI_REGISTRY_CONCAT_INNER(a, b)

// At namespace scope in a seed's reference.cpp:
//   GI_REGISTER_GENERATOR("bspline_brain", generate_bspline_brain);
//   GI_REGISTER_REFERENCE("bspline_deformation_field", bspline_reference);
#define GI_REGISTER_GENERATOR(name, fn)                                                       \
  [[maybe_unused]] static const bool GI_REGISTRY_CONCAT(gi_registered_generator_, __LINE__) = \
      (::gi::fitness::register_generator((name), (fn)), true)
#define GI_REGISTER_REFERENCE(entry, fn)                                                      \
  [[maybe_unused]] static const bool GI_REGISTRY_CONCAT(gi_registered_reference_, __LINE__) = \
      (::gi::fitness::register_reference((entry), (fn)), true)

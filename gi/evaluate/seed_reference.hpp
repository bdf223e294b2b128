#pragma once
// The seed as its own reference ("existing code is its own de facto
// specification"): a user's kernel with no CPU reference says
// "reference": "seed" in spec.json, and the expected outputs of every
// workload are what the unmodified seed computes on the GPU, at the spec's
// default block size. The seed runs three times per workload: integer
// outputs must repeat exactly, float outputs may differ (float atomics sum
// in another order each time) and their largest difference widens the
// tolerance (fitness/workload/workload_plan.hpp). A seed that faults, times
// out or writes out of bounds is no reference: that is an error naming the
// workload. Before a run relies on it, `gi evolve` also has compute-sanitizer
// check the seed and measures its training set's branch coverage
// (gi/run/evolution_run.hpp, RunBackend::check_seed).
#include <filesystem>
#include <optional>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/seed.hpp"

namespace gi {

// Installs the GPU run of `seed` as the reference of spec.entry on `device`
// when the spec asks for it; does nothing otherwise. The compile cache is
// used when `cache_dir` is given.
void use_seed_as_reference(const Seed& seed, const fitness::KernelSpec& spec, int device,
                           const std::optional<std::filesystem::path>& cache_dir);

}  // namespace gi

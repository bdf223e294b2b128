// CPU reference and input generator for ncc_block_matching.
//
// Generator "block_matching_brain": a tissue-like reference image, and a
// warped image that is the same image moved by a smooth displacement of about
// `amplitude` voxels (trilinear resampling on the CPU; zero outside) plus
// Gaussian noise, as a floating image resampled during a registration would
// be (BlockMatchDisplacement and block_matching_warped_image in
// blockmatching_support.hpp); the mask is the phantom's active voxels (1
// inside, 0 outside).
//
// The best displacement is an argmax: if two candidates of a block scored
// within float rounding of each other, a float kernel could pick the other
// one and be off by a whole voxel. The generator therefore runs the double
// search and takes out of the mask (sets to 0) every block whose best NCC is
// less than kTieMargin above its runner-up; such near ties are rare (well
// under 1% of the used blocks), and the mask stays realistic.
//
// Variables (all optional):
//   dim: [x, y, z] or n      image size (default 217^3)
//   amplitude: a             displacement size in voxels (default 2)
//   noise: s                 standard deviation of the added noise (default 2)
//   mask: brain | full | sphere | slab | shell   the mask (default brain)
//   min_voxels: n            voxels a block needs in the mask (default 32 of 64;
//                            0 lets empty blocks reach the kernel's own
//                            voxelNumber > 0 test)
//   search_radius: r         displacements -r .. r per axis (default 3)
//   skull_stripped: true | false   the reference image 0 outside the phantom's
//                            brain (default false), as after brain extraction:
//                            with noise 0 the warped image is 0 there too, so
//                            blocks and candidates of constant intensity occur
// Derived variables: imageDimX/Y/Z, voxelNumber, blockDimX/Y/Z, blockNumber,
// minimumVoxelNumber, searchRadius, usedBlockNumber (blocks the kernel
// matches), usedBlockVoxelNumber (their voxels), nearTieBlockNumber (blocks
// taken out of the mask for a near tie).
// Inputs: referenceImage (float), warpedImage (float), mask (int).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fitness/workload/reference_registry.hpp"
#include "seeds/blockmatching/blockmatching_support.hpp"
#include "seeds/common/brain_phantom.hpp"
#include "seeds/common/generator_args.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

// Well above the float kernel's NCC error (about 1e-6, see the spec's
// tolerance note), well below the gaps of real matches.
constexpr double kTieMargin = 1e-4;

Workload generate_block_matching_brain(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("block_matching_brain", variables,
                           {"dim", "amplitude", "noise", "mask", "min_voxels", "search_radius", "skull_stripped"});
  const Dim3 dims = args.dims("dim", Dim3{217, 217, 217});
  const double amplitude = args.number("amplitude", 2.0, 0.0, 20.0);
  const double noise = args.number("noise", 2.0, 0.0, 100.0);
  const MaskShape shape = mask_shape_from_name(args.choice("mask", "brain", mask_shape_names()));
  const int min_voxels = args.integer("min_voxels", 32, 0, kMatchBlockSize * kMatchBlockSize * kMatchBlockSize);
  const int radius = args.integer("search_radius", 3, 0, 8);

  std::vector<float> reference = tissue_image(dims, seed);
  if (args.flag("skull_stripped", false)) zero_outside_brain(reference, dims, seed);
  const std::vector<float> warped =
      block_matching_warped_image(reference, dims, BlockMatchDisplacement(dims, amplitude, seed), noise, seed);
  std::vector<std::int32_t> mask(dims.voxels(), 0);
  for (const std::int32_t i : active_voxels(dims, shape, seed)) mask[static_cast<std::size_t>(i)] = 1;

  // Take blocks with a near tie out of the mask (see above); the others keep
  // their results, blocks being independent.
  const Dim3 blocks = match_block_dims(dims);
  const std::vector<BlockMatch> matches = ncc_block_search(reference, warped, mask, dims, min_voxels, radius);
  double used = 0, used_voxels = 0, near_ties = 0;
  for (std::size_t t = 0; t < matches.size(); ++t) {
    const BlockMatch& m = matches[t];
    if (!m.used) continue;
    if (m.ncc - m.runner_up >= kTieMargin) {
      used += 1;
      used_voxels += m.voxels;
      continue;
    }
    near_ties += 1;
    const int bx = static_cast<int>(t % static_cast<std::size_t>(blocks.x));
    const int by = static_cast<int>((t / static_cast<std::size_t>(blocks.x)) % static_cast<std::size_t>(blocks.y));
    const int bz = static_cast<int>(t / (static_cast<std::size_t>(blocks.x) * static_cast<std::size_t>(blocks.y)));
    for (int c = 0; c < kMatchBlockSize; ++c)
      for (int b = 0; b < kMatchBlockSize; ++b)
        for (int a = 0; a < kMatchBlockSize; ++a) {
          const int X = bx * kMatchBlockSize + a, Y = by * kMatchBlockSize + b, Z = bz * kMatchBlockSize + c;
          if (X < dims.x && Y < dims.y && Z < dims.z) mask[dims.index(X, Y, Z)] = 0;
        }
  }

  Workload w;
  w.variables = {
      {"imageDimX", dims.x},
      {"imageDimY", dims.y},
      {"imageDimZ", dims.z},
      {"voxelNumber", static_cast<double>(dims.voxels())},
      {"blockDimX", blocks.x},
      {"blockDimY", blocks.y},
      {"blockDimZ", blocks.z},
      {"blockNumber", static_cast<double>(blocks.voxels())},
      {"minimumVoxelNumber", min_voxels},
      {"searchRadius", radius},
      {"usedBlockNumber", used},
      {"usedBlockVoxelNumber", used_voxels},
      {"nearTieBlockNumber", near_ties},
  };
  w.inputs["referenceImage"] = to_bytes(reference);
  w.inputs["warpedImage"] = to_bytes(warped);
  w.inputs["mask"] = to_bytes(mask);
  return w;
}

int var(const Workload& w, const char* name) { return workload_int(w, name, "ncc_block_matching"); }

// Per block (x fastest): (dx, dy, dz, NCC) of the best displacement, or
// (0, 0, 0, -2) for a block that is not used or has no candidate.
ReferenceOutputs ncc_block_matching_reference(const Workload& w) {
  const Dim3 dims{var(w, "imageDimX"), var(w, "imageDimY"), var(w, "imageDimZ")};
  const Dim3 blocks{var(w, "blockDimX"), var(w, "blockDimY"), var(w, "blockDimZ")};
  const auto reference = from_bytes<float>(w.inputs.at("referenceImage"), "referenceImage");
  const auto warped = from_bytes<float>(w.inputs.at("warpedImage"), "warpedImage");
  const auto mask = from_bytes<std::int32_t>(w.inputs.at("mask"), "mask");
  const Dim3 expected_blocks = match_block_dims(dims);
  if (blocks.x != expected_blocks.x || blocks.y != expected_blocks.y || blocks.z != expected_blocks.z)
    throw std::runtime_error("ncc_block_matching reference: blockDimX/Y/Z must be ceil(imageDimX/Y/Z / 4)");
  if (reference.size() != dims.voxels() || warped.size() != dims.voxels() || mask.size() != dims.voxels())
    throw std::runtime_error("ncc_block_matching reference: input sizes do not match the variables");
  const std::vector<BlockMatch> matches =
      ncc_block_search(reference, warped, mask, dims, var(w, "minimumVoxelNumber"), var(w, "searchRadius"));
  std::vector<double> out(4 * matches.size());
  for (std::size_t t = 0; t < matches.size(); ++t) {
    out[4 * t + 0] = matches[t].displacement[0];
    out[4 * t + 1] = matches[t].displacement[1];
    out[4 * t + 2] = matches[t].displacement[2];
    out[4 * t + 3] = matches[t].ncc;
  }
  return {{"blockResults", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("block_matching_brain", generate_block_matching_brain);
GI_REGISTER_REFERENCE("ncc_block_matching", ncc_block_matching_reference);

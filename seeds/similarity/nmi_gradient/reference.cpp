// CPU reference and input generator for similarity_nmi_gradient.
//
// Generator "similarity_nmi_gradient": the image pair, warped-image gradient
// and binning of similarity_nmi_histogram (variables dim, amplitude, mask,
// floating, skull_stripped, bins, warped_bins, bin_margin), and the NMI
// tables computed on the CPU from the joint histogram of the same math in
// double: log joint and log warped marginal probabilities (0 for empty bins),
// NMI, joint entropy and total mass (seeds/similarity/similarity_support.hpp).
// Derived variables: those of similarity_nmi_histogram and nmiValue,
// jointEntropy (floats as the kernel sees them), histogramTotal (the
// histogram's mass, N; the kernel's output is N * dNMI/dW * gradient).
// Inputs: referenceImage, warpedImage, warpedGradient (float4 per active
// voxel), activeVoxels, logJointProbability, logWarpedProbability.
#include "fitness/workload/reference_registry.hpp"
#include "seeds/similarity/similarity_support.hpp"

namespace {

using namespace gi::seeds;
using gi::fitness::ReferenceOutputs;
using gi::fitness::Workload;

std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

Workload generate_nmi_gradient(const nlohmann::json& variables, std::uint64_t seed) {
  const GeneratorArgs args("similarity_nmi_gradient", variables,
                           similarity_option_names({"bins", "warped_bins", "bin_margin"}));
  const SimilarityImages images = similarity_images(similarity_options(args), seed);
  const NmiBinning b = nmi_binning(args, images);
  const NmiTables t = nmi_tables(
      joint_histogram(images.reference, images.warped, images.active, b.reference_bins, b.warped_bins, b.reference,
                      b.warped),
      b.reference_bins, b.warped_bins);
  Workload w = image_pair_workload(images);
  add_binning_variables(w, b);
  w.variables["nmiValue"] = static_cast<float>(t.nmi);
  w.variables["jointEntropy"] = static_cast<float>(t.joint_entropy);
  w.variables["histogramTotal"] = static_cast<float>(t.total);
  w.inputs["warpedGradient"] = to_bytes(images.warped_gradient);
  w.inputs["logJointProbability"] = to_bytes(to_float(t.log_joint));
  w.inputs["logWarpedProbability"] = to_bytes(to_float(t.log_warped));
  return w;
}

// N * dNMI/dW at each active voxel (from the tables as given) times the
// warped gradient; w = 0.
ReferenceOutputs nmi_gradient_reference(const Workload& w) {
  const char* who = "similarity_nmi_gradient";
  const ImagePair p = read_image_pair(w, who);
  const NmiBinning b = read_binning(w, who);
  const auto gradient = from_bytes<Float4>(w.inputs.at("warpedGradient"), "warpedGradient");
  const auto log_joint_f = from_bytes<float>(w.inputs.at("logJointProbability"), "logJointProbability");
  const auto log_warped_f = from_bytes<float>(w.inputs.at("logWarpedProbability"), "logWarpedProbability");
  if (gradient.size() != p.active.size() ||
      log_joint_f.size() != static_cast<std::size_t>(b.reference_bins) * static_cast<std::size_t>(b.warped_bins) ||
      log_warped_f.size() != static_cast<std::size_t>(b.warped_bins))
    throw std::runtime_error(std::string(who) + " reference: input sizes do not match the variables");
  const std::vector<double> log_joint(log_joint_f.begin(), log_joint_f.end());
  const std::vector<double> log_warped(log_warped_f.begin(), log_warped_f.end());
  const auto real = [&](const char* name) { return static_cast<double>(static_cast<float>(w.variables.at(name))); };
  const double nmi = real("nmiValue"), joint_entropy = real("jointEntropy");
  std::vector<double> out(4 * p.active.size());
  parallel_for(p.active.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      const auto k = static_cast<std::size_t>(p.active[t]);
      const double derivative = nmi_intensity_derivative(
          bin_position(p.reference[k], b.reference), bin_position(p.warped[k], b.warped), b.reference_bins,
          b.warped_bins, log_joint, log_warped, nmi, joint_entropy, b.warped.scale);
      out[4 * t + 0] = derivative * gradient[t].x;
      out[4 * t + 1] = derivative * gradient[t].y;
      out[4 * t + 2] = derivative * gradient[t].z;
      out[4 * t + 3] = 0.0;
    }
  });
  return {{"nmiGradient", std::move(out)}};
}

}  // namespace

GI_REGISTER_GENERATOR("similarity_nmi_gradient", generate_nmi_gradient);
GI_REGISTER_REFERENCE("similarity_nmi_gradient", nmi_gradient_reference);

#include "gi/register/run_report.hpp"

#include "gi/publish/versions.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace gi::reg {

namespace {

double kernel_milliseconds(const RegistrationResult& result) {
  double total = 0;
  for (const auto& [name, t] : result.kernel_times) total += t.milliseconds;
  return total;
}

}  // namespace

std::string profile_table(const RegistrationResult& result) {
  std::vector<std::pair<std::string, KernelTime>> rows(result.kernel_times.begin(), result.kernel_times.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.milliseconds > b.second.milliseconds; });
  const double total = kernel_milliseconds(result);
  std::string out = "| kernel | launches | total ms | mean ms | share of kernel time |\n|---|---:|---:|---:|---:|\n";
  char line[256];
  for (const auto& [name, t] : rows) {
    std::snprintf(line, sizeof line, "| %s | %zu | %.2f | %.4f | %.1f%% |\n", name.c_str(), t.launches, t.milliseconds,
                  t.launches ? t.milliseconds / t.launches : 0.0, total > 0 ? 100 * t.milliseconds / total : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "| all kernels | | %.2f | | %.1f%% of the registration's %.3f s |\n", total,
                result.seconds > 0 ? total / 10 / result.seconds : 0.0, result.seconds);
  return out + line;
}

nlohmann::json run_record(const RegistrationResult& result, const RegistrationOptions& options,
                          const KernelSet& kernels, const std::string& device) {
  nlohmann::json j;
  j["gi_commit"] = gi_commit();
  j["device"] = device;
  j["options"] = {{"levels", options.levels},
                  {"spacing_voxels", options.spacing},
                  {"similarity", options.similarity == Similarity::Nmi ? "nmi" : "ssd"},
                  {"bins", options.bins},
                  {"bending_weight", options.bending_weight},
                  {"jacobian_weight", options.jacobian_weight},
                  {"max_iterations", options.max_iterations},
                  {"line_search", options.line_search == LineSearch::NiftyReg ? "niftyreg" : "bracketing"},
                  {"min_step_voxels", options.min_step > 0 ? options.min_step : options.spacing / 100}};
  for (const auto& [name, k] : kernels.kernels())
    j["kernels"][name] = {{"origin", k.origin}, {"evolved", k.evolved}, {"block_size", k.tuning.block_size},
                          {"options", k.tuning.options}};
  for (const LevelReport& l : result.levels)
    j["levels"].push_back({{"level", l.level},
                           {"image_dim", l.image_dim},
                           {"grid_dim", l.grid_dim},
                           {"iterations", l.iterations},
                           {"evaluations", l.evaluations},
                           {"folding_corrections", l.folding_corrections},
                           {"objective_start", l.objective_start},
                           {"objective_end", l.objective_end},
                           {"seconds", l.seconds},
                           {"entropy_seconds", l.entropy_seconds}});
  const char* mode = options.affine.mode == AffineMode::None    ? "none"
                     : options.affine.mode == AffineMode::Rigid ? "rigid"
                                                                 : "rigid then affine";
  j["affine"] = {{"mode", mode}, {"bspline_stage", options.bspline}, {"seconds", result.affine.seconds},
                 {"world_transform", result.affine.world_transform}};
  for (const AffineLevelReport& l : result.affine.levels)
    j["affine"]["levels"].push_back({{"level", l.level},
                                     {"iterations", l.iterations},
                                     {"blocks", l.blocks},
                                     {"matches", l.matches},
                                     {"inliers", l.inliers},
                                     {"rms_mm", l.rms_mm},
                                     {"seconds", {{"block selection", l.selection_seconds},
                                                  {"matching (device, read back)", l.matching_seconds},
                                                  {"sub-voxel refinement (host)", l.refinement_seconds},
                                                  {"fits (host)", l.fit_seconds}}}});
  j["seconds"] = result.seconds;
  j["kernel_milliseconds"] = kernel_milliseconds(result);
  for (const auto& [name, t] : result.kernel_times)
    j["profile"][name] = {{"launches", t.launches}, {"milliseconds", t.milliseconds}};
  return j;
}

}  // namespace gi::reg

#include "gi/publish/carry_over.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "fitness/workload/kernel_spec.hpp"
#include "gi/seed/patch_files.hpp"
#include "gi/seed/seed.hpp"
#include "gi/library/seed_library.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

nlohmann::json read_result(const fs::path& folder) {
  const fs::path file = folder / "result.json";
  try {
    return nlohmann::json::parse(read_text_file(file));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

// `r`: the folder's result.json, read once by the caller.
PublishedKernel published(const fs::path& folder, const nlohmann::json& r) {
  try {
    PublishedKernel k;
    k.patch_text = read_text_file(folder / "patch.gi");
    k.seed_tuning = tuning_from_json(r.at("tuning").at("seed"));
    k.evolved_tuning = tuning_from_json(r.at("tuning").at("evolved"));
    k.speedup = r.at("speedup").get<double>();
    k.speedup_ci_low = r.at("speedup_ci_low").get<double>();
    return k;
  } catch (const std::exception& e) {
    throw std::runtime_error((folder / "result.json").string() + ": " + e.what());
  }
}

std::string ratio_cell(const std::optional<ComparisonResult>& c) {
  if (!c) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3fx [%.3f]", c->speedup, c->speedup_ci_low);
  return buf;
}

}  // namespace

std::vector<CarryOverPair> carry_over_pairs(const fs::path& here_dir, const fs::path& from_dir,
                                            const fs::path& seeds_root, const std::string& kernels) {
  for (const fs::path& d : {here_dir, from_dir})
    if (!fs::is_directory(d)) throw std::runtime_error(d.string() + ": not a folder of evolved kernels");
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(here_dir))
    if (e.is_directory() && fs::exists(e.path() / "result.json") && fs::exists(from_dir / e.path().filename() / "result.json"))
      folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  const std::vector<std::string> globs = kernel_globs(kernels);
  std::vector<CarryOverPair> pairs;
  for (const fs::path& folder : folders) {
    CarryOverPair p;
    p.folder = folder.filename().string();
    try {
      const nlohmann::json here = read_result(folder);
      p.kernel = here.at("kernel").get<std::string>();
      if (std::none_of(globs.begin(), globs.end(), [&](const std::string& g) { return kernel_matches(p.kernel, g); }))
        continue;
      p.seed_dir = seeds_root / p.kernel;
      p.here = published(folder, here);
      p.from = published(from_dir / p.folder, read_result(from_dir / p.folder));
    } catch (const std::exception& e) {
      if (p.kernel.empty()) p.kernel = p.folder;
      p.error = e.what();
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

double carry_over_time_ratio(const CarryOverRow& row) {
  if (!row.own || !row.other || !(row.own->evolved.median_ms > 0)) return std::nan("");
  return row.other->evolved.median_ms / row.own->evolved.median_ms;
}

std::vector<CarryOverRow> measure_carry_over(const std::vector<CarryOverPair>& pairs, const ComparisonOptions& options,
                                             const std::function<void(const std::string&)>& say) {
  std::vector<CarryOverRow> rows;
  for (const CarryOverPair& p : pairs) {
    CarryOverRow row;
    row.pair = p;
    row.error = p.error;
    if (row.error.empty()) {
      try {
        const Seed seed = load_seed(p.seed_dir);
        const fitness::KernelSpec spec = fitness::load_kernel_spec(p.seed_dir);
        const std::vector<ComparedVariant> variants = {
            {&seed, parse_patch_for(seed, p.here.patch_text, p.folder + " (this GPU's patch.gi)"), p.here.evolved_tuning},
            {&seed, parse_patch_for(seed, p.from.patch_text, p.folder + " (the other GPU's patch.gi)"), p.from.evolved_tuning}};
        const std::vector<ComparisonOutcome> out =
            compare_many(seed, grammar::Patch{}, spec, p.here.seed_tuning, variants, options);
        if (out[0].error.empty()) row.own = out[0].result;
        if (out[1].error.empty()) row.other = out[1].result;
        for (std::size_t i = 0; i < out.size(); ++i)
          if (!out[i].error.empty()) row.error += (row.error.empty() ? "" : "; ") + std::string(i ? "other" : "own") + ": " + out[i].error;
      } catch (const std::exception& e) {
        row.error = e.what();
      }
    }
    if (say) say(p.kernel + ": own " + ratio_cell(row.own) + ", other " + ratio_cell(row.other) +
                 (row.error.empty() ? "" : " (" + row.error + ")"));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string carry_over_markdown(const std::string& here_gpu, const std::string& from_gpu,
                                const std::vector<CarryOverRow>& rows, const nlohmann::json& versions) {
  std::ostringstream out;
  out << "# " << from_gpu << "'s evolved kernels on " << here_gpu << "\n\nMeasured on "
      << versions.value("gpu", std::string("?")) << " (driver " << versions.value("driver", std::string("?"))
      << "), gi " << versions.value("gi_commit", std::string("?")) << ", " << versions.value("date", std::string("?"))
      << ". Each kernel's tuned seed, own evolved kernel and the other GPU's, round-robin in one process.\n\n";
  out << "| kernel | own kernel over tuned seed [ci low] | " << from_gpu << "'s kernel over tuned seed [ci low] | "
      << from_gpu << "'s time / own time | same patch |\n| --- | ---: | ---: | ---: | --- |\n";
  double log_sum = 0;
  int counted = 0, slower = 0;
  for (const CarryOverRow& r : rows) {
    const double ratio = carry_over_time_ratio(r);
    char buf[32] = "-";
    if (std::isfinite(ratio)) {
      std::snprintf(buf, sizeof buf, "%.3f", ratio);
      log_sum += std::log(ratio);
      ++counted;
      slower += r.other->speedup_ci_low <= 1.0 && r.own->speedup_ci_low > 1.0;
    }
    const bool same = r.pair.here.patch_text == r.pair.from.patch_text &&
                      r.pair.here.evolved_tuning == r.pair.from.evolved_tuning;
    out << "| " << r.pair.kernel << " | " << ratio_cell(r.own) << " | " << ratio_cell(r.other) << " | " << buf << " | "
        << (r.error.empty() ? (same ? "yes" : "no") : "error: " + r.error) << " |\n";
  }
  if (counted > 0) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "\nOn %s, %s's kernels take %.3fx the time of %s's own (geometric mean over %d kernels). Of the "
                  "kernels shown faster than the tuned seed here, %d %s not with %s's kernel.\n",
                  here_gpu.c_str(), from_gpu.c_str(), std::exp(log_sum / counted), here_gpu.c_str(), counted, slower,
                  slower == 1 ? "is" : "are", from_gpu.c_str());
    out << line;
  }
  return out.str();
}

nlohmann::json carry_over_json(const std::string& here_gpu, const std::string& from_gpu,
                               const std::vector<CarryOverRow>& rows, const nlohmann::json& versions) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const CarryOverRow& r : rows) {
    const double ratio = carry_over_time_ratio(r);
    kernels.push_back({{"kernel", r.pair.kernel},
                       {"own_patch", r.pair.here.patch_text},
                       {"other_patch", r.pair.from.patch_text},
                       {"own", r.own ? r.own->to_json() : nlohmann::json(nullptr)},
                       {"other", r.other ? r.other->to_json() : nlohmann::json(nullptr)},
                       {"other_time_over_own", std::isfinite(ratio) ? nlohmann::json(ratio) : nlohmann::json(nullptr)},
                       {"error", r.error}});
  }
  return {{"measured_on", here_gpu}, {"kernels_from", from_gpu}, {"versions", versions}, {"kernels", kernels}};
}

}  // namespace gi

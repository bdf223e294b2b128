#include "gi/publish/results_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "fitness/process/atomic_file.hpp"
#include "gi/seed/seed.hpp"
#include "gi/publish/run_summary.hpp"
#include "gi/publish/versions.hpp"
#include "grammar/patch.hpp"
#include "grammar/unified_diff.hpp"

namespace gi {
namespace fs = std::filesystem;

namespace {

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json sanitizer_json(const SanitizerResult& s) {
  return {{"status", s.status}, {"workload", s.workload}, {"summary", s.summary}, {"reason", s.reason},
          {"exit_code", s.exit_code}, {"seconds", s.seconds}};
}

std::string fixed(const nlohmann::json& v, const char* format) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

std::string percent(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v.get<double>());
  return buf;
}

// A markdown table cell: no '|' or line break may leak out of it.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string text_at(const nlohmann::json& j, const nlohmann::json::json_pointer& p) {
  if (!j.contains(p)) return "-";
  const auto& v = j.at(p);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string result_folder_name(const std::string& family, const std::string& kernel) { return family + "-" + kernel; }

std::string seed_source_path(const std::string& family, const std::string& kernel) {
  return "seeds/" + family + "/" + kernel + "/kernel.cu";
}

std::string result_gpu_slug(const ResultRecord& r) {
  if (r.versions.is_object() && r.versions.contains("gpu_slug") && r.versions["gpu_slug"].is_string())
    return r.versions["gpu_slug"].get<std::string>();
  return gpu_slug(r.comparison.gpu);
}

nlohmann::json result_json(const ResultRecord& r) {
  const ComparisonResult& c = r.comparison;
  const ValidationResult& v = r.validation;
  auto version = [&](const char* key) -> nlohmann::json {
    return r.versions.is_object() && r.versions.contains(key) ? r.versions[key] : nlohmann::json(nullptr);
  };
  return {{"kernel", r.family + "/" + r.kernel},
          {"folder", result_folder_name(r.family, r.kernel)},
          {"seed", r.seed_path.empty() ? seed_source_path(r.family, r.kernel) : r.seed_path},
          {"gpu", c.gpu.empty() ? version("gpu") : nlohmann::json(c.gpu)},
          {"gpu_slug", result_gpu_slug(r)},
          {"driver", version("driver")},
          {"runtime", version("runtime")},
          {"nvrtc", version("nvrtc")},
          {"gi_commit", version("gi_commit")},
          {"date", r.date},
          {"run_id", r.run_id},
          {"workload", c.workload},
          {"rounds", c.samples.size()},
          {"seed_median_ms", c.seed.median_ms},
          {"seed_relative_spread", finite(c.seed.relative_spread)},
          {"evolved_median_ms", c.evolved.median_ms},
          {"evolved_relative_spread", finite(c.evolved.relative_spread)},
          {"speedup", c.speedup},
          {"speedup_ci_low", c.speedup_ci_low},
          {"min_bytes_moved", c.min_bytes_moved},
          {"memory_floor_ms", c.memory_floor_ms},
          {"seed_floor_fraction", c.seed_floor_fraction},
          {"evolved_floor_fraction", c.evolved_floor_fraction},
          {"bandwidth_tb_s", c.bandwidth_bytes_per_s * 1e-12},
          {"tuning", {{"seed", to_json(c.seed_tuning)}, {"evolved", to_json(c.evolved_tuning)}}},
          {"validation",
           {{"workloads", v.workloads.size()},
            {"output_values", v.output_values},
            {"max_abs_error", finite(v.max_abs_error)},
            {"max_rel_error", finite(v.max_rel_error)},
            {"passed", v.passed},
            {"problems", v.problems}}},
          {"sanitizer",
           {{"memcheck", sanitizer_json(v.memcheck)},
            {"racecheck", sanitizer_json(v.racecheck)},
            {"synccheck", sanitizer_json(v.synccheck)},
            {"initcheck", sanitizer_json(v.initcheck)}}},
          {"over_best_switches",
           r.over_switches ? nlohmann::json{{"switches", r.over_switches->baseline_patch},
                                            {"tuning", to_json(r.over_switches->seed_tuning)},
                                            {"baseline_median_ms", r.over_switches->seed.median_ms},
                                            {"evolved_median_ms", r.over_switches->evolved.median_ms},
                                            {"speedup", r.over_switches->speedup},
                                            {"speedup_ci_low", r.over_switches->speedup_ci_low}}
                           : nlohmann::json(nullptr)},
          {"patch", r.patch_text},
          {"search_best", r.search_best ? *r.search_best : nlohmann::json(nullptr)},
          {"switch_best", r.switch_best ? *r.switch_best : nlohmann::json(nullptr)},
          {"tuned_seed", r.tuned_seed ? *r.tuned_seed : nlohmann::json(nullptr)},
          {"kept", r.kept.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.kept)},
          {"seed_sha256", r.seed_sha256},
          {"edits", r.edits},
          {"review", c.review}};
}

fs::path write_result(const fs::path& evolved_root, const ResultRecord& r) {
  if (r.family.empty() || r.kernel.empty()) throw std::invalid_argument("result: family and kernel must be named");
  const fs::path gpu_dir = evolved_root / result_gpu_slug(r);
  const fs::path dir = gpu_dir / result_folder_name(r.family, r.kernel);
  fs::create_directories(dir);
  // Without switches the diff applies to the seed from the repository root;
  // with them, to the plain path written beside it.
  const std::string path =
      r.seed_has_switches ? "plain.cu" : (r.seed_path.empty() ? seed_source_path(r.family, r.kernel) : r.seed_path);
  if (r.seed_has_switches) fitness::write_file_atomically(dir / "plain.cu", r.seed_source);
  fitness::write_file_atomically(dir / "kernel.cu", r.evolved_source);
  fitness::write_file_atomically(dir / "patch.gi", grammar::patch_file_text(r.patch_text, r.seed_sha256));
  fitness::write_file_atomically(dir / "kernel.diff",
                                 grammar::unified_diff(r.seed_source, r.evolved_source, "a/" + path, "b/" + path));
  fitness::write_file_atomically(dir / "result.json", result_json(r).dump(2) + "\n");
  if (!r.run_summary.is_null()) fitness::write_file_atomically(dir / kRunSummaryFile, run_summary_text(r.run_summary));
  write_results_readme(gpu_dir);
  return dir;
}

// "tuned seed kept: the search's best gave 0.995x [0.965x]": what a result
// published in place of the search's best, and why (gi/run/post_evolution.hpp).
// Results written before "kept" existed published the tuned seed.
static std::string kept_note(const nlohmann::json& r) {
  std::string kept = r.value("kept", nlohmann::json()).is_string() ? r["kept"].get<std::string>() : "the tuned seed";
  if (kept.rfind("the ", 0) == 0) kept = kept.substr(4);
  auto why = [](const nlohmann::json& best) {
    return best.contains("rejected") ? std::string("failed validation")
                                     : "gave " + fixed(best.value("speedup", nlohmann::json()), "%.3fx") + " [" +
                                           fixed(best.value("speedup_ci_low", nlohmann::json()), "%.3fx") + "]";
  };
  std::string note = kept + " kept: the search's best " + why(r["search_best"]);
  if (r.contains("switch_best") && r["switch_best"].is_object()) note += ", the best switch setting " + why(r["switch_best"]);
  if (r.contains("tuned_seed") && r["tuned_seed"].is_object()) {
    const nlohmann::json options = r["tuned_seed"].value("tuning", nlohmann::json::object()).value("options", nlohmann::json::array());
    note += ", the tuned seed with " + options.dump() + " " + why(r["tuned_seed"]);
  }
  return note;
}

std::string results_readme(const std::string& slug, const std::vector<nlohmann::json>& results) {
  std::vector<const nlohmann::json*> sorted;
  for (const auto& r : results) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return a->value("folder", "") < b->value("folder", "");
  });
  std::ostringstream out;
  out << "# Evolved kernels: " << slug << "\n\n"
      << "Generated from each kernel folder's `result.json` (do not edit by hand). Times are medians of an\n"
      << "interleaved seed-versus-evolved measurement on the training workload, each kernel with its own tuning;\n"
      << "the speed-up's 95% bootstrap lower bound is in brackets. Floor: the fraction of the memory-bandwidth\n"
      << "floor (bytes the kernel must move / measured copy bandwidth) each kernel reaches (100% = at the floor).\n"
      << "Apply a kernel's change from the repository root with `patch -p1 < evolved/" << slug
      << "/<folder>/kernel.diff`; for a seed with switches (alternative code paths) the diff is against its plain\n"
      << "path, `plain.cu` in the folder, and applies there. \"over best switches\": the evolved kernel against the\n"
      << "seed's best switch setting without line edits (retuned), interleaved: what GI's edits added beyond\n"
      << "choosing a path. A patch is published only when it passes held-out validation and the lower bound of its\n"
      << "speed-up is above 1; otherwise the seed's best switch setting without line edits is tried in its place\n"
      << "(\"best switch setting kept\"), then the tuned seed itself (\"tuned seed kept\", measured against itself;\n"
      << "where its compiler options fail validation, the seed at its block size without them), each with what\n"
      << "the search's best gave.\n\n"
      << "| kernel | seed ms | evolved ms | speed-up [ci low] | over best switches [ci low] | floor seed / evolved | validation | memcheck | racecheck | run | date |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |\n";
  for (const nlohmann::json* p : sorted) {
    const nlohmann::json& r = *p;
    if (r.contains("error")) {
      out << "| " << cell(r.value("folder", "?")) << " | - | - | - | - | - | " << cell(r["error"].get<std::string>())
          << " | - | - | - | - |\n";
      continue;
    }
    std::string speedup = fixed(r.value("speedup", nlohmann::json()), "%.3fx") + " [" +
                          fixed(r.value("speedup_ci_low", nlohmann::json()), "%.3fx") + "]";
    if (r.value("review", false)) speedup += " **review**";
    if (r.contains("search_best") && r["search_best"].is_object()) speedup += " (" + kept_note(r) + ")";
    std::string over_switches = "-";
    if (r.contains("over_best_switches") && r["over_best_switches"].is_object()) {
      const auto& o = r["over_best_switches"];
      over_switches = fixed(o.value("speedup", nlohmann::json()), "%.3fx") + " [" +
                      fixed(o.value("speedup_ci_low", nlohmann::json()), "%.3fx") + "] vs " +
                      (o.value("switches", std::string()).empty() ? std::string("the seed's own") : o["switches"].get<std::string>());
    }
    std::string validation = "-";
    if (r.contains("validation") && r["validation"].is_object()) {
      const auto& v = r["validation"];
      validation = std::string(v.value("passed", false) ? "passed" : "FAILED") + ", " +
                   std::to_string(v.value("workloads", 0)) + " workloads, " +
                   fixed(v.value("output_values", nlohmann::json()), "%.0f") + " values, max abs " +
                   fixed(v.value("max_abs_error", nlohmann::json()), "%.2g");
    }
    out << "| " << cell(text_at(r, "/kernel"_json_pointer)) << " | "
        << fixed(r.value("seed_median_ms", nlohmann::json()), "%.4f") << " | "
        << fixed(r.value("evolved_median_ms", nlohmann::json()), "%.4f") << " | " << cell(speedup) << " | "
        << cell(over_switches) << " | "
        << percent(r.value("seed_floor_fraction", nlohmann::json())) << " / "
        << percent(r.value("evolved_floor_fraction", nlohmann::json())) << " | " << cell(validation) << " | "
        << cell(text_at(r, "/sanitizer/memcheck/status"_json_pointer)) << " | "
        << cell(text_at(r, "/sanitizer/racecheck/status"_json_pointer)) << " | "
        << cell(text_at(r, "/run_id"_json_pointer)) << " | " << cell(text_at(r, "/date"_json_pointer)) << " |\n";
  }
  // The library's figure: every kernel's speed-up counts, slow-downs and
  // kernels left as they were included; unreadable results cannot.
  double log_sum = 0;
  int counted = 0;
  for (const nlohmann::json* p : sorted) {
    const nlohmann::json s = p->value("speedup", nlohmann::json());
    if (!s.is_number() || !(s.get<double>() > 0)) continue;
    log_sum += std::log(s.get<double>());
    ++counted;
  }
  if (counted > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "\nGeometric-mean speed-up over the tuned seeds: **%.3fx** over %d kernel%s.\n",
                  std::exp(log_sum / counted), counted, counted == 1 ? "" : "s");
    out << line;
  }
  return out.str();
}

void write_results_readme(const fs::path& gpu_dir) {
  std::vector<nlohmann::json> results;
  for (const auto& entry : fs::directory_iterator(gpu_dir)) {
    if (!entry.is_directory()) continue;
    const fs::path file = entry.path() / "result.json";
    if (!fs::exists(file)) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(read_text_file(file));
      if (!j.is_object()) throw std::runtime_error("not a JSON object");
      j["folder"] = entry.path().filename().string();
      results.push_back(std::move(j));
    } catch (const std::exception& e) {
      results.push_back({{"folder", entry.path().filename().string()},
                         {"error", "result.json unreadable: " + std::string(e.what())}});
    }
  }
  fitness::write_file_atomically(gpu_dir / "README.md", results_readme(gpu_dir.filename().string(), results));
}

}  // namespace gi

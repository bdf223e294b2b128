#include "gi/study/study_plan.hpp"

#include <map>
#include <set>
#include <stdexcept>

#include "gi/search/edit_operators.hpp"
#include "gi/search/search_strategy.hpp"

namespace gi {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& field, const std::string& what) {
  throw std::runtime_error(file + ": " + field + ": " + what);
}

void only_fields(const nlohmann::json& j, const std::set<std::string>& allowed, const std::string& file,
                 const std::string& where) {
  if (!j.is_object()) bad(file, where, "expected an object");
  for (const auto& [key, value] : j.items())
    if (!allowed.count(key)) bad(file, where.empty() ? key : where + "." + key, "unknown field");
}

int positive_int(const nlohmann::json& j, const std::string& file, const std::string& field) {
  if (!j.is_number_integer() || j.get<long long>() < 1) bad(file, field, "expected a whole number of at least 1");
  return j.get<int>();
}

std::string text(const nlohmann::json& j, const std::string& file, const std::string& field) {
  if (!j.is_string() || j.get<std::string>().empty()) bad(file, field, "expected a non-empty string");
  return j.get<std::string>();
}

std::vector<std::string> texts(const nlohmann::json& j, const std::string& file, const std::string& field) {
  if (!j.is_array()) bad(file, field, "expected an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(text(j[i], file, field + "[" + std::to_string(i) + "]"));
  return out;
}

void check_families(const std::string& families, const std::string& file, const std::string& field) {
  try {
    parse_families(families);
  } catch (const std::exception& e) {
    bad(file, field, e.what());
  }
}

void check_algorithm(const std::string& a, const std::string& file, const std::string& field) {
  if (!find_search_strategy(a)) bad(file, field, "'" + a + "': expected " + search_strategy_names());
}

}  // namespace

nlohmann::json StudyCell::to_json() const {
  return {{"name", name}, {"families", families}, {"algorithm", algorithm}, {"launch_tuning", launch_tuning},
          {"search", search}, {"parameter_sweep", parameter_sweep}, {"population", population},
          {"generations", generations}, {"varies", varies}};
}

StudyCell StudyCell::from_json(const nlohmann::json& c) {
  StudyCell cell;
  cell.name = c.at("name").get<std::string>();
  cell.families = c.at("families").get<std::string>();
  cell.algorithm = c.at("algorithm").get<std::string>();
  cell.launch_tuning = c.at("launch_tuning").get<bool>();
  cell.search = c.at("search").get<bool>();
  cell.parameter_sweep = c.value("parameter_sweep", true);  // studies from before the sweep: its default
  cell.population = c.at("population").get<int>();
  cell.generations = c.at("generations").get<int>();
  cell.varies = c.value("varies", std::string());
  return cell;
}

StudyPlan StudyPlan::from_json(const nlohmann::json& j) {
  StudyPlan p;
  p.kernels = j.at("kernels").get<std::vector<std::string>>();
  p.repeats = j.at("repeats").get<int>();
  p.first_seed = j.at("first_seed").get<std::uint64_t>();
  p.population = j.at("population").get<int>();
  p.generations = j.at("generations").get<int>();
  p.timing_budget_seconds = j.at("timing_budget_seconds").get<double>();
  p.sanitizers = j.at("sanitizers").get<bool>();
  p.baseline = j.at("baseline").get<std::string>();
  for (const auto& c : j.at("cells")) p.cells.push_back(StudyCell::from_json(c));
  // Studies begun before cell_kernels existed ran every cell on every kernel.
  if (j.contains("cell_kernels"))
    p.cell_kernels = j.at("cell_kernels").get<std::map<std::string, std::vector<std::string>>>();
  return p;
}

nlohmann::json StudyPlan::to_json() const {
  nlohmann::json c = nlohmann::json::array();
  for (const auto& cell : cells) c.push_back(cell.to_json());
  nlohmann::json j = {{"kernels", kernels}, {"repeats", repeats}, {"first_seed", first_seed}, {"population", population},
                      {"generations", generations}, {"timing_budget_seconds", timing_budget_seconds}, {"sanitizers", sanitizers},
                      {"baseline", baseline},
                      {"cells", c}};
  // Left out when empty, so that the study.json of older studies still
  // equals the plan it was made from.
  if (!cell_kernels.empty()) j["cell_kernels"] = cell_kernels;
  return j;
}

bool StudyPlan::runs(const std::string& cell, const std::string& kernel) const {
  const auto it = cell_kernels.find(cell);
  if (it == cell_kernels.end()) return true;
  for (const std::string& k : it->second)
    if (k == kernel) return true;
  return false;
}

StudyPlan parse_study(const std::string& source, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(source);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(file + ": malformed JSON: " + e.what());
  }
  only_fields(j, {"kernels", "repeats", "first_seed", "budget", "algorithm", "baseline", "vary", "cells",
                  "timing_budget_seconds", "sanitizers", "comment", "cell_kernels"},
              file, "");
  StudyPlan plan;
  if (!j.contains("kernels")) bad(file, "kernels", "missing: the seed folders to study");
  plan.kernels = texts(j.at("kernels"), file, "kernels");
  if (plan.kernels.empty()) bad(file, "kernels", "expected at least one seed folder");
  if (j.contains("repeats")) plan.repeats = positive_int(j.at("repeats"), file, "repeats");
  if (j.contains("first_seed")) plan.first_seed = static_cast<std::uint64_t>(positive_int(j.at("first_seed"), file, "first_seed"));
  if (j.contains("timing_budget_seconds")) {
    if (!j.at("timing_budget_seconds").is_number() || !(j.at("timing_budget_seconds").get<double>() > 0))
      bad(file, "timing_budget_seconds", "expected a positive number");
    plan.timing_budget_seconds = j.at("timing_budget_seconds").get<double>();
  }
  if (j.contains("sanitizers")) {
    if (!j.at("sanitizers").is_boolean()) bad(file, "sanitizers", "expected true or false");
    plan.sanitizers = j.at("sanitizers").get<bool>();
  }
  if (j.contains("budget")) {
    const auto& b = j.at("budget");
    only_fields(b, {"population", "generations"}, file, "budget");
    if (b.contains("population")) plan.population = positive_int(b.at("population"), file, "budget.population");
    if (b.contains("generations")) plan.generations = positive_int(b.at("generations"), file, "budget.generations");
  }
  const std::string algorithm = j.contains("algorithm") ? text(j.at("algorithm"), file, "algorithm") : "gp";
  check_algorithm(algorithm, file, "algorithm");

  // The four cells every study has.
  StudyCell everything{"everything", "all", algorithm, true, true, 0, 0, "baseline: every family, launch tuning, " + algorithm};
  plan.cells.push_back(everything);
  plan.cells.push_back({"line_and_cuda_edits", "line,cuda", algorithm, false, true, 0, 0,
                        "line and CUDA-aware edits only: no switches, no coarsening, no launch tuning"});
  plan.cells.push_back({"switches_only", "define", algorithm, false, true, 0, 0,
                        "switch paths only: no edits, no launch tuning"});
  plan.cells.push_back({"launch_tuning_only", "all", algorithm, true, false, 0, 0, "launch tuning only: no search"});

  if (j.contains("vary")) {
    const auto& v = j.at("vary");
    only_fields(v, {"leave_out", "alone", "algorithms", "budgets"}, file, "vary");
    // "everything" with one factor changed.
    const auto vary_one = [&](const std::string& name, const std::string& families, const std::string& search,
                              const std::string& varies) {
      StudyCell c = everything;
      c.name = name;
      c.families = families;
      c.algorithm = search;
      c.varies = varies;
      plan.cells.push_back(c);
    };
    if (v.contains("leave_out"))
      for (const std::string& f : texts(v.at("leave_out"), file, "vary.leave_out")) {
        check_families(f, file, "vary.leave_out");
        vary_one("without_" + f, "all,-" + f, algorithm, "every family but " + f);
      }
    if (v.contains("alone"))
      for (const std::string& f : texts(v.at("alone"), file, "vary.alone")) {
        check_families(f, file, "vary.alone");
        vary_one("only_" + f, f, algorithm, f + " alone (with launch tuning)");
      }
    if (v.contains("algorithms"))
      for (const std::string& a : texts(v.at("algorithms"), file, "vary.algorithms")) {
        check_algorithm(a, file, "vary.algorithms");
        vary_one("search_" + a, "all", a, a + " search instead of " + algorithm);
      }
    if (v.contains("budgets")) {
      const auto& budgets = v.at("budgets");
      if (!budgets.is_array()) bad(file, "vary.budgets", "expected an array of objects");
      for (std::size_t i = 0; i < budgets.size(); ++i) {
        const std::string where = "vary.budgets[" + std::to_string(i) + "]";
        only_fields(budgets[i], {"name", "population", "generations"}, file, where);
        StudyCell c = everything;
        c.name = "budget_" + text(budgets[i].value("name", nlohmann::json()), file, where + ".name");
        if (budgets[i].contains("population")) c.population = positive_int(budgets[i].at("population"), file, where + ".population");
        if (budgets[i].contains("generations")) c.generations = positive_int(budgets[i].at("generations"), file, where + ".generations");
        c.varies = "budget: population " + std::to_string(c.population ? c.population : plan.population) +
                   ", generations " + std::to_string(c.generations ? c.generations : plan.generations);
        plan.cells.push_back(c);
      }
    }
  }
  if (j.contains("cells")) {
    const auto& cells = j.at("cells");
    if (!cells.is_array()) bad(file, "cells", "expected an array of objects");
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string where = "cells[" + std::to_string(i) + "]";
      const auto& cj = cells[i];
      only_fields(cj, {"name", "families", "algorithm", "launch_tuning", "search", "parameter_sweep", "population",
                       "generations"},
                  file, where);
      StudyCell c = everything;
      c.name = text(cj.value("name", nlohmann::json()), file, where + ".name");
      if (cj.contains("families")) c.families = text(cj.at("families"), file, where + ".families");
      check_families(c.families, file, where + ".families");
      if (cj.contains("algorithm")) c.algorithm = text(cj.at("algorithm"), file, where + ".algorithm");
      check_algorithm(c.algorithm, file, where + ".algorithm");
      for (const auto& [flag, field] : {std::pair<const char*, bool*>{"launch_tuning", &c.launch_tuning},
                                        {"search", &c.search}, {"parameter_sweep", &c.parameter_sweep}}) {
        if (!cj.contains(flag)) continue;
        if (!cj.at(flag).is_boolean()) bad(file, where + "." + flag, "expected true or false");
        *field = cj.at(flag).get<bool>();
      }
      if (cj.contains("population")) c.population = positive_int(cj.at("population"), file, where + ".population");
      if (cj.contains("generations")) c.generations = positive_int(cj.at("generations"), file, where + ".generations");
      c.varies = "the study's own cell";
      plan.cells.push_back(c);
    }
  }
  std::set<std::string> names;
  for (const auto& c : plan.cells)
    if (!names.insert(c.name).second) bad(file, "cells", "the cell name '" + c.name + "' is used twice");
  plan.baseline = j.contains("baseline") ? text(j.at("baseline"), file, "baseline") : "everything";
  if (!names.count(plan.baseline)) bad(file, "baseline", "'" + plan.baseline + "' is no cell of the study");
  if (j.contains("cell_kernels")) {
    const auto& ck = j.at("cell_kernels");
    if (!ck.is_object()) bad(file, "cell_kernels", "expected an object: cell name -> seed folders");
    const std::set<std::string> kernels(plan.kernels.begin(), plan.kernels.end());
    for (const auto& [name, list] : ck.items()) {
      const std::string where = "cell_kernels." + name;
      if (!names.count(name)) bad(file, where, "'" + name + "' is no cell of the study");
      plan.cell_kernels[name] = texts(list, file, where);
      for (const std::string& k : plan.cell_kernels[name])
        if (!kernels.count(k)) bad(file, where, "'" + k + "' is not in the study's kernels");
    }
  }
  // Two kernels of one slug in one cell would share run folders.
  for (const auto& c : plan.cells) {
    std::map<std::string, std::string> by_slug;
    for (const std::string& k : plan.kernels) {
      if (!plan.runs(c.name, k)) continue;
      const auto [it, fresh] = by_slug.emplace(kernel_slug(k), k);
      if (!fresh)
        bad(file, "cell_kernels", "cell '" + c.name + "' would run '" + it->second + "' and '" + k +
                                      "', whose runs share the folder name " + it->first +
                                      ": keep them in different cells");
    }
  }
  return plan;
}

std::string kernel_slug(const std::string& seed_dir) {
  std::filesystem::path p = std::filesystem::path(seed_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  const std::string family = p.parent_path().filename().string();
  return (family.empty() ? std::string() : family + "-") + p.filename().string();
}

nlohmann::json StudyRun::to_json() const {
  nlohmann::json j = {{"kernel", kernel}, {"cell", cell},     {"repeat", repeat},
                      {"seed", seed},     {"run_dir", run_dir}, {"status", status}};
  if (!error.empty()) j["error"] = error;
  return j;
}

StudyRun StudyRun::from_json(const nlohmann::json& j) {
  StudyRun r;
  r.kernel = j.at("kernel").get<std::string>();
  r.cell = j.at("cell").get<std::string>();
  r.repeat = j.at("repeat").get<int>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.run_dir = j.at("run_dir").get<std::string>();
  r.status = j.at("status").get<std::string>();
  r.error = j.value("error", std::string());
  return r;
}

std::vector<StudyRun> expand_runs(const StudyPlan& plan) {
  std::vector<StudyRun> runs;
  for (int r = 0; r < plan.repeats; ++r)
    for (const std::string& kernel : plan.kernels)
      for (const StudyCell& cell : plan.cells) {
        if (!plan.runs(cell.name, kernel)) continue;
        StudyRun run;
        run.kernel = kernel;
        run.cell = cell.name;
        run.repeat = r;
        run.seed = plan.first_seed + static_cast<std::uint64_t>(r);
        run.run_dir = "runs/" + kernel_slug(kernel) + "/" + cell.name + "/seed-" + std::to_string(run.seed);
        runs.push_back(run);
      }
  return runs;
}

}  // namespace gi

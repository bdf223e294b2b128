#include "fitness/check/coverage_report.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace gi::fitness {

namespace {

const char* direction_text(bool direction) { return direction ? "true" : "false"; }

// The timed workload, at the seed's own switch setting ("train") or another
// ("train@BSPLINE_PATH=1").
bool is_timed(const std::string& workload) { return workload == "train" || workload.rfind("train@", 0) == 0; }

}  // namespace

std::uint64_t DirectionCoverage::total() const {
  std::uint64_t sum = 0;
  for (std::uint64_t c : counts) sum += c;
  return sum;
}

std::size_t CoverageReport::taken_by_timed() const {
  return static_cast<std::size_t>(std::count_if(directions.begin(), directions.end(), [&](const DirectionCoverage& d) {
    for (std::size_t w = 0; w < workloads.size(); ++w)
      if (is_timed(workloads[w]) && d.taken_by(w)) return true;
    return false;
  }));
}

std::size_t CoverageReport::taken() const {
  return static_cast<std::size_t>(
      std::count_if(directions.begin(), directions.end(), [](const DirectionCoverage& d) { return d.taken(); }));
}

std::size_t CoverageReport::exempt() const {
  return static_cast<std::size_t>(std::count_if(directions.begin(), directions.end(), [](const DirectionCoverage& d) {
    return !d.taken() && d.exemption.has_value();
  }));
}

std::vector<const DirectionCoverage*> CoverageReport::untaken() const {
  std::vector<const DirectionCoverage*> out;
  for (const DirectionCoverage& d : directions)
    if (!d.taken() && !d.exemption) out.push_back(&d);
  return out;
}

std::string CoverageReport::name(const DirectionCoverage& d) const {
  return sites.at(d.site).key + " " + direction_text(d.direction);
}

CoverageReport coverage_report(std::vector<BranchSite> sites, std::vector<std::string> workloads,
                               const std::vector<std::vector<std::uint64_t>>& counts,
                               const std::vector<CoverageExemption>& exemptions, const std::string& spec_name) {
  if (counts.size() != workloads.size())
    throw std::invalid_argument("coverage: " + std::to_string(counts.size()) + " counter sets for " +
                                std::to_string(workloads.size()) + " workloads");
  for (std::size_t w = 0; w < counts.size(); ++w)
    if (counts[w].size() < 2 * sites.size())
      throw std::invalid_argument("coverage: workload '" + workloads[w] + "' has " + std::to_string(counts[w].size()) +
                                  " counters, expected " + std::to_string(2 * sites.size()) + " (2 per site)");
  CoverageReport r;
  r.sites = std::move(sites);
  r.workloads = std::move(workloads);
  std::map<std::string, std::size_t> by_key;
  for (std::size_t s = 0; s < r.sites.size(); ++s) {
    by_key[r.sites[s].key] = s;
    for (const bool direction : {false, true}) {
      DirectionCoverage d;
      d.site = s;
      d.direction = direction;
      for (const auto& c : counts) d.counts.push_back(c[2 * s + (direction ? 1 : 0)]);
      r.directions.push_back(std::move(d));
    }
  }
  for (const CoverageExemption& e : exemptions) {
    const auto it = by_key.find(e.branch);
    if (it == by_key.end()) {
      r.errors.push_back(spec_name + ": " + e.json_path + ".branch: stale exemption: no branch site " + e.branch +
                         " in the kernel (the kernel changed, or the key is wrong; `gi coverage` lists the sites)");
      continue;
    }
    DirectionCoverage& d = r.directions[2 * it->second + (e.direction ? 1 : 0)];
    d.exemption = e.reason;
    if (d.taken())
      r.notes.push_back(spec_name + ": " + e.json_path + ": " + r.name(d) +
                        " is exempted but the training set takes it; the exemption can go");
  }
  return r;
}

nlohmann::json to_json(const CoverageReport& r) {
  nlohmann::json sites = nlohmann::json::array();
  for (std::size_t s = 0; s < r.sites.size(); ++s) {
    const BranchSite& site = r.sites[s];
    nlohmann::json j = {{"key", site.key},   {"kind", to_string(site.kind)}, {"line", site.line},
                        {"column", site.column}, {"text", site.text},           {"function", site.function}};
    for (const bool direction : {false, true}) {
      const DirectionCoverage& d = r.directions[2 * s + (direction ? 1 : 0)];
      nlohmann::json dj = {{"counts", d.counts}, {"taken", d.taken()}};
      if (d.exemption) dj["exempt"] = *d.exemption;
      j[direction_text(direction)] = dj;
    }
    sites.push_back(j);
  }
  nlohmann::json untaken = nlohmann::json::array();
  for (const DirectionCoverage* d : r.untaken())
    untaken.push_back({{"branch", r.sites[d->site].key},
                       {"direction", direction_text(d->direction)},
                       {"text", r.sites[d->site].text}});
  return {{"passed", r.passed()},
          {"workloads", r.workloads},
          {"directions", r.directions.size()},
          {"taken_by_train", r.taken_by_timed()},
          {"taken", r.taken()},
          {"exempt", r.exempt()},
          {"untaken", untaken},
          {"errors", r.errors},
          {"notes", r.notes},
          {"sites", sites}};
}

std::string coverage_table(const CoverageReport& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"branch", "dir"};
  for (const std::string& w : r.workloads) header.push_back(w);
  header.push_back("status");
  header.push_back("source");
  rows.push_back(header);
  std::vector<std::string> reasons = {""};
  for (const DirectionCoverage& d : r.directions) {
    std::vector<std::string> row = {r.sites[d.site].key, direction_text(d.direction)};
    for (std::uint64_t c : d.counts) row.push_back(std::to_string(c));
    row.push_back(d.taken() ? (d.exemption ? "taken+exempt" : "taken") : (d.exemption ? "exempt" : "UNTAKEN"));
    row.push_back(r.sites[d.site].text);
    rows.push_back(std::move(row));
    reasons.push_back(d.exemption ? *d.exemption : "");
  }
  // Every column but the source text padded to its widest cell; an
  // exemption's reason goes on a line of its own below its direction.
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (std::size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      std::string cell = rows[i][c];
      if (c + 1 < rows[i].size()) cell.resize(width[c], ' ');
      line += (c == 0 ? "" : "  ") + cell;
    }
    out << line << "\n";
    if (!reasons[i].empty()) out << "    exempt because: " << reasons[i] << "\n";
  }
  out << r.directions.size() << " directions: " << r.taken_by_timed() << " taken by train alone, " << r.taken()
      << " by the training set (" << r.workloads.size() << " workloads), " << r.exempt() << " exempt, "
      << r.untaken().size() << " untaken\n";
  for (const std::string& e : r.errors) out << "error: " << e << "\n";
  for (const std::string& n : r.notes) out << "note: " << n << "\n";
  out << (r.passed() ? "coverage passed" : "coverage FAILED") << "\n";
  return out.str();
}

}  // namespace gi::fitness

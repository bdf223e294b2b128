#pragma once
// Which branch directions of a seed its training set takes, from the
// counters of coverage runs (fitness/instrument/branch_coverage.hpp), one run per
// training workload, and the spec's exemptions. A seed passes when every
// direction is taken by some training workload or exempted with a reason;
// an exemption that names no site of the kernel is an error (it is stale:
// the kernel changed, or the key is mistyped). CPU only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fitness/instrument/branch_coverage.hpp"
#include "fitness/workload/kernel_spec.hpp"

namespace gi::fitness {

struct DirectionCoverage {
  std::size_t site = 0;                 // index into CoverageReport::sites
  bool direction = false;
  std::vector<std::uint64_t> counts;    // per workload, in CoverageReport::workloads order
  std::optional<std::string> exemption;  // the spec's reason, when exempted

  std::uint64_t total() const;
  bool taken() const { return total() > 0; }
  bool taken_by(std::size_t workload) const { return workload < counts.size() && counts[workload] > 0; }
};

struct CoverageReport {
  // "train", "train:1", ...; runs of another switch setting of the seed
  // (another code path) are named "train@BSPLINE_PATH=1", ...
  std::vector<std::string> workloads;
  std::vector<BranchSite> sites;
  std::vector<DirectionCoverage> directions;   // site i: [2i] false, [2i+1] true
  std::vector<std::string> errors;             // stale exemptions
  std::vector<std::string> notes;              // exemptions of directions the training set takes

  // Directions taken by the timed workload ("train", at any switch setting)
  // alone: the coverage the library had before it had train_checks.
  std::size_t taken_by_timed() const;
  std::size_t taken() const;
  // Untaken and exempted.
  std::size_t exempt() const;
  // Untaken and not exempted: what fails the seed.
  std::vector<const DirectionCoverage*> untaken() const;
  bool passed() const { return errors.empty() && untaken().empty(); }

  // "if@35:13 false"
  std::string name(const DirectionCoverage& d) const;
};

// `counts[w]` are the counters the coverage run of workloads[w] read back:
// 2 per site, false then true (BranchInstrumentation::counters() of them).
// `spec_name` names the spec in error messages. Throws std::invalid_argument
// when the counts do not fit the sites.
CoverageReport coverage_report(std::vector<BranchSite> sites, std::vector<std::string> workloads,
                               const std::vector<std::vector<std::uint64_t>>& counts,
                               const std::vector<CoverageExemption>& exemptions, const std::string& spec_name);

// Every site with both directions' counts per workload, the totals and
// what failed; gi verify stores it in the kernel's JSON.
nlohmann::json to_json(const CoverageReport& report);

// One line per direction: key, direction, counts per workload, status
// (taken / UNTAKEN / exempt: reason) and the source text; for `gi coverage`.
std::string coverage_table(const CoverageReport& report);

}  // namespace gi::fitness

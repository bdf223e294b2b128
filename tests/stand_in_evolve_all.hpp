#pragma once
// gi evolve-all without a GPU: every stage of every kernel's run (tuning,
// switch baseline, search, retuning, minimisation, publication) on a
// deterministic stand-in evaluator (the timing model of
// modelled_evaluation.hpp). tests/evolve_all_test.cpp runs it in-process;
// the gi_stand_in_evolve_all binary runs it under mpirun, so that two MPI
// ranks can be compared byte for byte with one process.
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "fitness/process/atomic_file.hpp"
#include "gi/run/evolution_run.hpp"
#include "gi/run/evolve_all.hpp"
#include "gi/seed/seed.hpp"
#include "modelled_evaluation.hpp"

namespace gi::test {
namespace fs = std::filesystem;

// The evolve-all tests' kernels: one whose every evaluation fails (the seed
// included) and one whose publication is rejected.
inline constexpr const char* kStandInBroken = "tools-max_vector_length";
inline constexpr const char* kStandInRejected = "tools-intensity_minmax";
inline constexpr const char* kStandInKernels =
    "tools/sum_reduction,tools/max_vector_length,similarity/ssd_gradient,tools/intensity_minmax";

// Thrown by the stand-in to cut a call short, as a kill would: it is not a
// std::runtime_error, so evolve-all does not take it for a kernel's failure.
struct Interrupted {};

// Counts down to an interruption over every evaluation of the call; < 0: never.
struct Interrupter {
  long left = -1;
  void tick() {
    if (left < 0) return;
    if (left-- == 0) throw Interrupted{};
  }
};

// The shared timing model (modelled_evaluation.hpp), counting down to an
// interruption; a `broken` kernel fails everything, the seed included.
class StandInEvaluator : public StageEvaluator {
 public:
  StandInEvaluator(Interrupter& interrupter, bool broken) : interrupter_(interrupter), broken_(broken) {}
  void begin_generation(int, std::uint64_t data_seed) override { data_seed_ = data_seed; }
  void use_workload(const std::string&, std::uint64_t data_seed) override { data_seed_ = data_seed; }
  void set_tuning(const Tuning& t) override { tuning_ = t; }
  void set_seed_time(double) override {}
  EvaluatorStats stats() const override { return stats_; }
  std::vector<Evaluation> evaluate(const std::vector<grammar::Patch>& patches) override {
    std::vector<Evaluation> out;
    for (const auto& p : patches) {
      interrupter_.tick();
      Evaluation e = test::modelled_evaluation(p, data_seed_, tuning_);
      if (broken_) {
        e.status = EvalStatus::WrongOutput;
        e.median_ms = std::numeric_limits<double>::infinity();
      }
      out.push_back(e);
      ++stats_.evaluations;
    }
    return out;
  }

 private:
  Interrupter& interrupter_;
  bool broken_;
  Tuning tuning_;
  std::uint64_t data_seed_ = 0;
  EvaluatorStats stats_;
};

// Publication as the GPU backend's last stage would do it, from the run's
// own files: the minimised patch and its tuning, or a rejection.
inline bool stand_in_finish(RunDirectory& run, const EvolveOptions& o, const std::string& rejected, Interrupter& interrupter) {
  interrupter.tick();
  const std::string kernel = run.path().filename().string();
  if (kernel == rejected) return false;
  const fs::path folder = o.evolved_root / "stand-in-gpu" / kernel;
  fs::create_directories(folder);
  nlohmann::json result = {{"kernel", kernel},
                           {"patch", read_text_file(run.path() / "minimised.gi")},
                           {"minimised", *run.read_json("minimised.json")},
                           {"tuning", run.read_json("tuning_best.json")->at("best")}};
  fitness::write_file_atomically(folder / "result.json", result.dump(2) + "\n");
  return true;
}


// The stages' backend of one kernel's run on the stand-in.
inline RunBackend stand_in_backend(const EvolveOptions& run, Interrupter& interrupter, const std::string& broken,
                                   const std::string& rejected) {
  RunBackend b;
  const std::string kernel = run.run_dir.filename().string();
  b.make_evaluator = [&interrupter, kernel, broken](const Seed&, const fitness::KernelSpec&, const nlohmann::json&) {
    return std::unique_ptr<StageEvaluator>(std::make_unique<StandInEvaluator>(interrupter, kernel == broken));
  };
  b.finish = [&interrupter, run, rejected](RunDirectory& r, const Seed&, const fitness::KernelSpec&,
                                           const std::function<void(const std::string&)>&) {
    return stand_in_finish(r, run, rejected, interrupter);
  };
  return b;
}

// The evolve-all the tests run: four kernels (one broken, one rejected),
// population 10, 4 generations, in ROOT/out with results in ROOT/evolved.
inline EvolveAllOptions stand_in_options(const fs::path& root, const fs::path& seeds_root) {
  EvolveAllOptions o;
  o.seeds_root = seeds_root;
  o.kernels = kStandInKernels;
  o.budget_per_kernel_minutes = 600;
  o.out_dir = root / "out";
  o.run.evolved_root = root / "evolved";
  o.run.cache_dir = root / "cache";
  o.run.search.population = 10;
  o.run.search.generations = 4;
  o.run.search.seed = 11;
  o.run.search.data_every = 2;
  o.say = [](const std::string&) {};
  o.run.quiet = true;
  o.gpu_slug = "stand-in-gpu";
  return o;
}

}  // namespace gi::test

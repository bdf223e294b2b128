#pragma once
// What a seed's switches give without any line edit: every switch setting
// (gi/seed/switch_settings.hpp) measured on the training set at every block size
// of the tuning space (with the tuned seed's compile options), the fastest
// then retuned over the whole space. A result reports the evolved kernel
// against the tuned plain seed and against this baseline, so it says how
// much came from choosing a path and how much GI's edits added (docs/design.md,
// "Edits, patches and switches"). Seeds without switches have no such baseline.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/evaluate/evaluator.hpp"
#include "gi/seed/seed.hpp"
#include "gi/seed/switch_settings.hpp"
#include "gi/search/tuning.hpp"

namespace gi {

struct SwitchBaseline {
  struct Trial {
    std::string setting;  // "" for the seed's own
    grammar::Patch patch;
    Evaluation eval;      // at its best block size (invalid when no block size gave a valid run)
    Tuning tuning;        // that block size, with the seed's compile options
    std::vector<TuningTrial> block_trials;  // every block size tried
  };
  std::vector<Trial> trials;
  std::string best_setting;
  grammar::Patch best_patch;  // the define edits of the best setting (empty: the seed's own)
  Tuning best_tuning;         // the best setting, retuned
  double best_median_ms = 0;

  nlohmann::json to_json() const;
  // Throws std::runtime_error naming what is missing or malformed.
  static SwitchBaseline from_json(const nlohmann::json& j);
};

// Whether the best switch setting alone (retuned) is faster than a search's
// retuned winner beyond the noise margin: then that setting is published
// instead (gi/run/evolution_run.cpp), never a kernel slower than a path choice.
bool switch_baseline_beats(const SwitchBaseline& b, double winner_median_ms, double noise_margin);

// The tuning the search evaluates its variants at: the best switch
// setting's when a setting other than the seed's own is fastest, else the
// tuned seed's. A search holds one tuning for all variants and retunes only
// its winner; variants on a hand-written path built for, e.g., 512 threads
// ranked at the plain seed's 128 would be ranked by a tuning none of them
// will be published at.
Tuning search_tuning(const SwitchBaseline& b, const Tuning& seed_tuning);

// Measures every setting at every block size of `space` with `seed_tuning`'s
// options on the evaluator's current data, then tunes the fastest valid one
// over `space`. Throws when no setting is
// valid (the seed's own must be).
SwitchBaseline measure_switch_baseline(Evaluator& evaluator, const Seed& seed, const Tuning& seed_tuning,
                                       const TuningSpace& space);

}  // namespace gi

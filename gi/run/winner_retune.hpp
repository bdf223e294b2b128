#pragma once
// Stage 3 of an evolution run: the search ranked its variants at one tuning;
// its winner is retuned over the whole tuning space on fresh data before it
// is minimised, validated and published. Two fallbacks keep a run going and
// honest:
// - a winner valid on every generation's data it met but invalid at every
//   tuning on the retuning data (it fitted the search's data only) gives way
//   to the next candidate (winner_candidates), and past them all to the seed;
// - a winner slower than the best switch setting alone (each retuned, on the
//   same data) gives way to that setting: a published kernel is never slower
//   than choosing a hand-written path, and its result then says GI's edits
//   added nothing.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gi/search/search.hpp"
#include "gi/search/switch_baseline.hpp"
#include "gi/search/tuning.hpp"

namespace gi {

// What the retuning tries, in turn, until one is valid on the tuning data:
// the search's best, then the last generation's other valid variants from the
// fastest, distinct, at most `limit` (never empty: the seed when the search
// kept nothing).
std::vector<grammar::Patch> winner_candidates(const SearchState& state, std::size_t limit);

// Retunes the winner on the evaluator's current data; `swept` (the winner
// after its parameter sweep), when given, is tried before the search's
// candidates. The JSON is what a run
// keeps as tuning_best.json: the TuningResult of the winner, plus
// "winner_patch" when the winner is not the search's best, and
// "search_winner" (patch, tuning, median) when the switch baseline replaced it.
nlohmann::json retune_winner(Evaluator& evaluator, const SearchState& state, const TuningSpace& space,
                             const std::optional<SwitchBaseline>& baseline,
                             const std::function<void(const std::string&)>& say,
                             const std::optional<grammar::Patch>& swept = std::nullopt);

// The winner tuning_best.json names: its "winner_patch", else the search's best.
grammar::Patch retuned_winner_patch(const nlohmann::json& tuning_best, const SearchState& state);

}  // namespace gi

// What the two search loops (THROUGHPUT with incremental loads, STEP_TIME/LATENCY with re-simulation) share:
// their inputs, their outcome, the annealing schedule and the stopping rule.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/seeded_random.h"
#include "policy/placer.h"
#include "policy/search/local_search.h"
#include "policy/search/search_units.h"

namespace placement::search {

// Hands new best placements to the budget's listener (Budget::on_improved), scored and named "local_search", at
// most once per kPeriod: scoring costs a full evaluation, and a client streaming answers needs a few a second,
// not every one of thousands of small steps. The last one need not be reported: it is what Place returns.
class ImprovementReporter {
 public:
  static constexpr absl::Duration kPeriod = absl::Milliseconds(100);

  ImprovementReporter(const PlacementProblem& problem, const Budget& budget) : problem_(problem), budget_(budget) {}
  bool listening() const { return budget_.on_improved != nullptr && *budget_.on_improved; }
  void NewBest(const Placement& placement) {
    if (!listening()) return;
    const absl::Time now = absl::Now();
    if (now - last_ < kPeriod) return;
    last_ = now;
    absl::StatusOr<PlacerResult> r = ScorePlacement(problem_, placement, "local_search");
    if (r.ok() && r->evaluation.fits_memory) budget_.Improved(*r);
  }

 private:
  const PlacementProblem& problem_;
  const Budget& budget_;
  absl::Time last_ = absl::InfinitePast();
};

struct SearchContext {
  const PlacementProblem* problem;
  const SearchUnits* units;
  const LocalSearchOptions* options;
  const Budget* budget;
  ImprovementReporter* reporter;
};

struct SearchOutcome {
  Placement best;
  int64_t tried = 0;     // moves proposed, including those a screen or the memory check turned down
  int64_t screened = 0;  // turned down by a cheap check before evaluation
  int64_t accepted = 0;
  int64_t improved = 0;    // accepted moves that gave a new best
  std::string stopped_by;  // "deadline", "move limit", "no improvement in N moves", "no unit can move"
};

// Temperature as a function of the move count alone, so that a seed and a move limit fix the answer whatever the
// clock does. The first cycle is pure descent; every later cycle restarts from the best placement and cools
// linearly from the initial temperature to zero, ending in descent again.
class AnnealingSchedule {
 public:
  AnnealingSchedule(int64_t cycle_moves, bool annealing)
      : cycle_(std::max<int64_t>(1, cycle_moves)), annealing_(annealing) {}
  // Fraction of the initial temperature for the current move.
  double Factor() const {
    if (!annealing_ || cycle_index_ == 0) return 0;
    return 1.0 - static_cast<double>(in_cycle_) / static_cast<double>(cycle_);
  }
  // Counts a move; true when a cycle just ended (the caller restarts from the best placement).
  bool Advance() {
    if (++in_cycle_ < cycle_) return false;
    in_cycle_ = 0;
    ++cycle_index_;
    return true;
  }
  int64_t cycle() const { return cycle_; }

 private:
  int64_t cycle_;
  bool annealing_;
  int64_t in_cycle_ = 0;
  int64_t cycle_index_ = 0;
};

// Decides when a loop ends: the budget (checked every `clock_period` moves, since absl::Now() is not free next to
// an incremental move), the move limit, or too long without a new best.
class StopRule {
 public:
  StopRule(const SearchContext& ctx, int64_t default_stale, int64_t clock_period)
      : budget_(*ctx.budget), max_moves_(ctx.options->max_moves), clock_period_(clock_period) {
    const int64_t stale = ctx.options->max_stale_moves;
    max_stale_ = stale == 0 ? default_stale : stale;  // -1: never
  }
  // True when the loop must stop before its next iteration; `tried` moves so far, the last new best at move
  // `last_best`. Sets `why`.
  bool Stop(int64_t iteration, int64_t tried, int64_t last_best, std::string& why) const {
    if (max_moves_ > 0 && tried >= max_moves_) {
      why = "move limit";
      return true;
    }
    if (max_stale_ > 0 && tried - last_best >= max_stale_) {
      why = "no improvement in " + std::to_string(tried - last_best) + " moves";
      return true;
    }
    if (iteration % clock_period_ == 0 && budget_.Expired()) {
      why = "deadline";
      return true;
    }
    return false;
  }

 private:
  const Budget& budget_;
  int64_t max_moves_;
  int64_t max_stale_;
  int64_t clock_period_;
};

// Units on each device, for drawing a random unit of a given device in O(1).
class DeviceMembers {
 public:
  DeviceMembers(const SearchUnits& units, const Placement& p, int32_t num_devices)
      : members_(num_devices), slot_(units.num_units()) {
    for (int32_t u = 0; u < units.num_units(); ++u) {
      std::vector<int32_t>& m = members_[units.device_of(p, u)];
      slot_[u] = static_cast<int32_t>(m.size());
      m.push_back(u);
    }
  }
  const std::vector<int32_t>& on(DeviceId d) const { return members_[d]; }
  void Move(int32_t u, DeviceId from, DeviceId to) {
    std::vector<int32_t>& src = members_[from];
    const int32_t last = src.back();
    src[slot_[u]] = last;
    slot_[last] = slot_[u];
    src.pop_back();
    slot_[u] = static_cast<int32_t>(members_[to].size());
    members_[to].push_back(u);
  }

 private:
  std::vector<std::vector<int32_t>> members_;
  std::vector<int32_t> slot_;
};

// A random element of a non-empty vector.
template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[seeded::UniformBelow(rng, v.size())];
}

// A random device other than `avoid` that unit u may use, or kNone.
inline DeviceId RandomOtherDevice(std::mt19937_64& rng, const SearchUnits& units, int32_t u, DeviceId avoid) {
  absl::Span<const DeviceId> allowed = units.allowed_devices(u);
  const size_t at = std::lower_bound(allowed.begin(), allowed.end(), avoid) - allowed.begin();
  if (at == allowed.size() || allowed[at] != avoid) return allowed[seeded::UniformBelow(rng, allowed.size())];
  if (allowed.size() < 2) return kNone;
  // Draw among the others without a second draw: indices at and above `at` shift up by one.
  const size_t i = seeded::UniformBelow(rng, allowed.size() - 1);
  return allowed[i < at ? i : i + 1];
}

// Whether any unit has a second device to go to.
inline bool AnyUnitCanMove(const SearchUnits& units) {
  for (int32_t u = 0; u < units.num_units(); ++u) {
    if (units.allowed_devices(u).size() > 1) return true;
  }
  return false;
}

absl::StatusOr<SearchOutcome> SearchThroughput(const SearchContext& ctx, Placement start, std::mt19937_64& rng);
absl::StatusOr<SearchOutcome> SearchSimulated(const SearchContext& ctx, Placement start, std::mt19937_64& rng);

}  // namespace placement::search

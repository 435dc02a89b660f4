// THROUGHPUT local search: the objective is the largest device load, so moves start at the bottleneck device,
// and each is scored from the incremental loads of ThroughputState in O(degree) rather than a full re-score.
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/search/search_loop.h"
#include "policy/search/throughput_state.h"
#include "simulator/objectives.h"

namespace placement::search {
namespace {

// Lexicographic: the largest load, then the sum of squared loads, which rewards lightening one of several
// equally loaded devices (otherwise a plateau for the maximum alone).
struct Score {
  double max = 0;
  double sum_squares = 0;
};

using Moves = std::vector<std::pair<int32_t, DeviceId>>;  // (unit, destination)

constexpr double kRelativeTolerance = 1e-12;
constexpr double kInitialTemperature = 0.01;  // of the best maximum: a 1% worse move passes with odds 1/e at first
constexpr double kSpreadWeight = 0.1;         // weight of the RMS load in the annealing energy
constexpr int64_t kResyncEvery = 1024;        // accepted moves between full recomputations of the loads
constexpr int32_t kMaxRun = 8;

class ThroughputSearch {
 public:
  ThroughputSearch(const SearchContext& ctx, Placement start, std::mt19937_64& rng)
      : ctx_(ctx),
        units_(*ctx.units),
        num_devices_(ctx.problem->topology().num_devices()),
        rng_(rng),
        state_(*ctx.problem->costs, units_, std::move(start)),
        members_(units_, state_.placement(), num_devices_),
        schedule_(std::clamp<int64_t>(20 * static_cast<int64_t>(units_.num_units()), 2000, 100000),
                  ctx.options->annealing),
        stop_(ctx, 10 * schedule_.cycle(), 64) {
    current_ = Current();
    best_ = current_;
    moved_from_.assign(units_.num_units(), kNone);
  }

  absl::StatusOr<SearchOutcome> Run() {
    if (!AnyUnitCanMove(units_)) {
      out_.stopped_by = "no unit can move";
      out_.best = state_.placement();
      return std::move(out_);
    }
    for (int64_t iteration = 0;; ++iteration) {
      if (stop_.Stop(iteration, out_.tried, last_best_, out_.stopped_by)) break;
      if (schedule_.Advance()) RestartFromBest();
      const double temperature = kInitialTemperature * best_.max * schedule_.Factor();
      const Moves moves = Propose();
      if (moves.empty()) {
        ++out_.tried;
        continue;
      }
      if (!TryMoves(moves)) continue;
      const Score next = Current();
      bool accept = Better(next, current_);
      if (!accept && temperature > 0) {
        const double delta = Energy(next) - Energy(current_);
        accept = delta <= 0 || seeded::Uniform01(rng_) < std::exp(-delta / temperature);
      }
      if (!accept) {
        state_.Rollback();
        continue;
      }
      if (absl::Status s = Accept(moves, next); !s.ok()) return s;
    }
    out_.best = at_best_ ? state_.placement() : std::move(best_placement_);
    return std::move(out_);
  }

 private:
  Score Current() const { return Score{state_.MaxLoad(), state_.SumOfSquares()}; }

  bool Better(const Score& a, const Score& b) const {
    const double tolerance = kRelativeTolerance * std::abs(b.max);
    if (a.max < b.max - tolerance) return true;
    if (a.max > b.max + tolerance) return false;
    return a.sum_squares < b.sum_squares * (1 - kRelativeTolerance);
  }

  double Energy(const Score& s) const { return s.max + kSpreadWeight * std::sqrt(s.sum_squares / num_devices_); }

  // Applies the moves as a try. False (and rolled back) when a device they fill overflows its memory.
  bool TryMoves(const Moves& moves) {
    ++out_.tried;
    state_.BeginTry();
    for (const auto& [u, d] : moves) state_.MoveUnit(u, d);
    for (const auto& [u, d] : moves) {
      const int64_t capacity = ctx_.problem->topology().device(d).memory_bytes;
      if (capacity > 0 && state_.held_bytes(d) > capacity) {
        state_.Rollback();
        ++out_.screened;
        return false;
      }
    }
    return true;
  }

  absl::Status Accept(const Moves& moves, const Score& next) {
    if (at_best_ && !Better(next, best_)) {  // leaving the best: keep it, as it was before these moves
      best_placement_ = state_.placement();
      for (const auto& [u, d] : moves) units_.Assign(best_placement_, u, moved_from_[u]);
    }
    // Where each unit came from was remembered when the move was proposed.
    for (const auto& [u, d] : moves) {
      const DeviceId from = moved_from_[u];
      if (from != d) members_.Move(u, from, d);
    }
    state_.Commit();
    current_ = next;
    ++out_.accepted;
    if (out_.accepted % kResyncEvery == 0) {
      state_.Resync();
      current_ = Current();
    }
    if (Better(current_, best_)) {
      best_ = current_;
      at_best_ = true;
      ++out_.improved;
      last_best_ = out_.tried;
      ctx_.reporter->NewBest(state_.placement());
    } else {
      at_best_ = false;
    }
    if (ctx_.options->verify_incremental) return Verify();
    return absl::OkStatus();
  }

  absl::Status Verify() const {
    const std::vector<double> full = DeviceLoads(*ctx_.problem->costs, state_.placement());
    for (DeviceId d = 0; d < num_devices_; ++d) {
      const double tolerance = 1e-9 * std::max(1.0, std::abs(full[d]));
      if (std::abs(full[d] - state_.loads()[d]) > tolerance) {
        return absl::InternalError(absl::StrCat("incremental load of device '", ctx_.problem->topology().device(d).name,
                                                "' is ", state_.loads()[d], " but DeviceLoads gives ", full[d],
                                                " after ", out_.accepted, " accepted moves"));
      }
    }
    return absl::OkStatus();
  }

  void RestartFromBest() {
    if (at_best_) return;
    for (int32_t u = 0; u < units_.num_units(); ++u) {
      const DeviceId want = units_.device_of(best_placement_, u);
      const DeviceId have = state_.device_of_unit(u);
      if (want == have) continue;
      state_.MoveUnit(u, want);
      members_.Move(u, have, want);
    }
    state_.Resync();
    current_ = Current();
    at_best_ = true;
  }

  DeviceId Bottleneck() {
    const double max = current_.max;
    std::vector<DeviceId>& ties = scratch_devices_;
    ties.clear();
    for (DeviceId d = 0; d < num_devices_; ++d) {
      if (state_.loads()[d] >= max * (1 - 1e-9) && !members_.on(d).empty()) ties.push_back(d);
    }
    return ties.empty() ? kNone : Pick(rng_, ties);
  }

  // Records where the units of a proposal sit now (Accept needs it after the try has moved them).
  Moves Remember(Moves moves) {
    for (const auto& [u, d] : moves) moved_from_[u] = state_.device_of_unit(u);
    return moves;
  }

  Moves Propose() {
    const double r = seeded::Uniform01(rng_);
    const DeviceId b = Bottleneck();
    if (b == kNone || r >= 0.9) return Remember(RandomMove());
    const int32_t u = Pick(rng_, members_.on(b));
    if (r < 0.35) return Remember(BestTarget(u));
    if (r < 0.5) return Remember(SingleMove(u));
    if (r < 0.7) return Remember(Swap(u, b));
    return Remember(Run(u, b));
  }

  Moves SingleMove(int32_t u) {
    const DeviceId d = RandomOtherDevice(rng_, units_, u, state_.device_of_unit(u));
    return d == kNone ? Moves{} : Moves{{u, d}};
  }

  Moves RandomMove() { return SingleMove(static_cast<int32_t>(seeded::UniformBelow(rng_, units_.num_units()))); }

  // Every other device u may use, scored; the best one is proposed (each scoring counts as a tried move).
  Moves BestTarget(int32_t u) {
    const DeviceId from = state_.device_of_unit(u);
    DeviceId best = kNone;
    Score best_score;
    for (DeviceId d : units_.allowed_devices(u)) {
      if (d == from || !state_.Fits(u, d)) continue;
      if (!TryMoves({{u, d}})) continue;
      const Score s = Current();
      state_.Rollback();
      if (best == kNone || Better(s, best_score)) {
        best = d;
        best_score = s;
      }
    }
    return best == kNone ? Moves{} : Moves{{u, best}};
  }

  Moves Swap(int32_t u, DeviceId b) {
    const DeviceId d = RandomOtherDevice(rng_, units_, u, b);
    if (d == kNone || members_.on(d).empty()) return {};
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int32_t w = Pick(rng_, members_.on(d));
      if (units_.allowed(w, b)) return {{u, d}, {w, b}};
    }
    return {};
  }

  // A run of up to kMaxRun connected units of the bottleneck device, grown from u, moved together to the
  // device of one of u's neighbours elsewhere: shifts a pipeline boundary without paying a transfer per unit.
  Moves Run(int32_t u, DeviceId b) {
    std::vector<DeviceId>& across = scratch_devices_;
    across.clear();
    for (int32_t w : units_.neighbours(u)) {
      const DeviceId d = state_.device_of_unit(w);
      if (d != b && units_.allowed(u, d)) across.push_back(d);
    }
    const DeviceId c = across.empty() ? RandomOtherDevice(rng_, units_, u, b) : Pick(rng_, across);
    if (c == kNone) return {};
    const int32_t length = 2 + static_cast<int32_t>(seeded::UniformBelow(rng_, kMaxRun - 1));
    Moves moves = {{u, c}};
    for (size_t head = 0; head < moves.size() && static_cast<int32_t>(moves.size()) < length; ++head) {
      for (int32_t w : units_.neighbours(moves[head].first)) {
        if (static_cast<int32_t>(moves.size()) >= length) break;
        if (state_.device_of_unit(w) != b || !units_.allowed(w, c)) continue;
        bool seen = false;
        for (const auto& m : moves) seen = seen || m.first == w;
        if (!seen) moves.emplace_back(w, c);
      }
    }
    return moves;
  }

  const SearchContext& ctx_;
  const SearchUnits& units_;
  const int32_t num_devices_;
  std::mt19937_64& rng_;
  ThroughputState state_;
  DeviceMembers members_;
  AnnealingSchedule schedule_;
  StopRule stop_;
  Score current_;
  Score best_;
  bool at_best_ = true;  // the state is the best placement; best_placement_ is only filled when leaving it
  Placement best_placement_;
  int64_t last_best_ = 0;
  std::vector<DeviceId> moved_from_;
  std::vector<DeviceId> scratch_devices_;
  SearchOutcome out_;
};

}  // namespace

absl::StatusOr<SearchOutcome> SearchThroughput(const SearchContext& ctx, Placement start, std::mt19937_64& rng) {
  ThroughputSearch search(ctx, std::move(start), rng);
  return search.Run();
}

}  // namespace placement::search

// STEP_TIME and LATENCY local search: every candidate is re-simulated, since queueing and link contention make
// the makespan a global function of the placement. Simulations are the cost, so moves aim at the critical
// chain of the current schedule and pass two cheap screens first: the busy time of every device bounds the
// makespan from below, and a critical operator is only sent where it could finish earlier than it does now.
#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "policy/search/critical_path.h"
#include "policy/search/search_loop.h"
#include "simulator/simulator.h"

namespace placement::search {
namespace {

using Moves = std::vector<std::pair<int32_t, DeviceId>>;  // (unit, destination)

constexpr double kRelativeTolerance = 1e-12;
constexpr double kInitialTemperature = 0.01;  // of the best makespan
constexpr int32_t kMaxRun = 8;

class SimulatedSearch {
 public:
  SimulatedSearch(const SearchContext& ctx, Placement start, std::mt19937_64& rng)
      : ctx_(ctx),
        costs_(*ctx.problem->costs),
        units_(*ctx.units),
        num_devices_(ctx.problem->topology().num_devices()),
        rng_(rng),
        placement_(std::move(start)),
        members_(units_, placement_, num_devices_),
        schedule_(std::clamp<int64_t>(2 * static_cast<int64_t>(units_.num_units()), 100, 1000), ctx.options->annealing),
        stop_(ctx, 10 * schedule_.cycle(), 1) {
    config_ = ctx.problem->simulator;
    config_.record_timeline = false;
    params_.assign(num_devices_, 0);
    from_.assign(units_.num_units(), kNone);
    for (int32_t u = 0; u < units_.num_units(); ++u) params_[units_.device_of(placement_, u)] += units_.param_bytes(u);
  }

  absl::StatusOr<SearchOutcome> Run() {
    if (absl::Status s = Analyze(); !s.ok()) return s;
    best_value_ = value_;
    if (!AnyUnitCanMove(units_)) {
      out_.stopped_by = "no unit can move";
      out_.best = placement_;
      return std::move(out_);
    }
    for (int64_t iteration = 0;; ++iteration) {
      if (stop_.Stop(iteration, out_.tried, last_best_, out_.stopped_by)) break;
      if (schedule_.Advance()) {
        if (absl::Status s = RestartFromBest(); !s.ok()) return s;
      }
      const double temperature = kInitialTemperature * best_value_ * schedule_.Factor();
      ++out_.tried;
      const Moves moves = Propose();
      if (moves.empty() || !PassesScreens(moves, value_ + 3 * temperature)) {
        ++out_.screened;
        continue;
      }
      Apply(moves);
      absl::StatusOr<SimulationResult> sim = Simulate(costs_, placement_, config_);
      if (!sim.ok()) return sim.status();
      const double next = sim->makespan;
      bool accept = sim->fits_memory && next < value_ * (1 - kRelativeTolerance);
      if (!accept && sim->fits_memory && temperature > 0) {
        accept = seeded::Uniform01(rng_) < std::exp(-(next - value_) / temperature);
      }
      if (!accept) {
        Revert(moves);
        continue;
      }
      if (absl::Status s = Accept(moves, next); !s.ok()) return s;
    }
    out_.best = at_best_ ? placement_ : std::move(best_placement_);
    return std::move(out_);
  }

 private:
  // Simulates the current placement with its timeline and reads the critical chain.
  absl::Status Analyze() {
    SimulatorConfig with_timeline = config_;
    with_timeline.record_timeline = true;
    absl::StatusOr<SimulationResult> sim = Simulate(costs_, placement_, with_timeline);
    if (!sim.ok()) return sim.status();
    value_ = sim->makespan;
    step_ = AnalyzeStep(costs_, placement_, *sim, config_);
    return absl::OkStatus();
  }

  void Apply(const Moves& moves) {
    for (const auto& [u, d] : moves) units_.Assign(placement_, u, d);
  }
  void Revert(const Moves& moves) {
    for (auto it = moves.rbegin(); it != moves.rend(); ++it) units_.Assign(placement_, it->first, from_[it->first]);
  }

  absl::Status Accept(const Moves& moves, double next) {
    const bool new_best = next < best_value_ * (1 - kRelativeTolerance);
    if (at_best_ && !new_best) {  // leaving the best: keep it, as it was before these moves
      best_placement_ = placement_;
      for (const auto& [u, d] : moves) units_.Assign(best_placement_, u, from_[u]);
    }
    for (const auto& [u, d] : moves) {
      members_.Move(u, from_[u], d);
      params_[from_[u]] -= units_.param_bytes(u);
      params_[d] += units_.param_bytes(u);
    }
    ++out_.accepted;
    if (new_best) {
      best_value_ = next;
      at_best_ = true;
      ++out_.improved;
      last_best_ = out_.tried;
      ctx_.reporter->NewBest(placement_);
    } else {
      at_best_ = false;
    }
    return Analyze();
  }

  absl::Status RestartFromBest() {
    if (at_best_) return absl::OkStatus();
    for (int32_t u = 0; u < units_.num_units(); ++u) {
      const DeviceId want = units_.device_of(best_placement_, u);
      const DeviceId have = units_.device_of(placement_, u);
      if (want == have) continue;
      members_.Move(u, have, want);
      params_[have] -= units_.param_bytes(u);
      params_[want] += units_.param_bytes(u);
    }
    placement_ = best_placement_;
    at_best_ = true;
    return Analyze();
  }

  // Busy time bounds the makespan from below, and parameters stay resident: a move that overloads either on
  // some device cannot be accepted, so it is not simulated.
  bool PassesScreens(const Moves& moves, double threshold) {
    delta_busy_.assign(num_devices_, 0);
    delta_params_.assign(num_devices_, 0);
    for (const auto& [u, d] : moves) {
      const DeviceId from = from_[u];
      delta_busy_[from] -= units_.time(u, from);
      delta_busy_[d] += units_.time(u, d);
      delta_params_[from] -= units_.param_bytes(u);
      delta_params_[d] += units_.param_bytes(u);
    }
    for (const auto& [u, d] : moves) {
      if (step_.busy[d] + delta_busy_[d] >= threshold) return false;
      const int64_t capacity = ctx_.problem->topology().device(d).memory_bytes;
      if (capacity > 0 && params_[d] + delta_params_[d] > capacity) return false;
    }
    return true;
  }

  // When v could finish on d if d were free: its inputs' arrival (producers of v's own unit move with it).
  double EstimatedEnd(OpId v, DeviceId d) const {
    const Graph& g = costs_.graph();
    double ready = 0;
    for (EdgeId e : g.in_edges(v)) {
      const OpId p = g.edge(e).src;
      const DeviceId at = units_.unit_of(p) == units_.unit_of(v) ? d : placement_.device[p];
      ready = std::max(ready, step_.end[p] + (at == d ? 0.0 : costs_.transfer_time(g.edge_tensor(e), at, d)));
    }
    return ready + costs_.op_time(v, d);
  }

  // The device where critical operator v could finish earliest, if earlier than it does now; else kNone.
  DeviceId EarlierDevice(OpId v) const {
    const int32_t u = units_.unit_of(v);
    const DeviceId here = placement_.device[v];
    DeviceId best = kNone;
    double best_end = step_.end[v] * (1 - 1e-9);
    for (DeviceId d : units_.allowed_devices(u)) {
      if (d == here) continue;
      const double end = EstimatedEnd(v, d);
      if (end < best_end) {
        best_end = end;
        best = d;
      }
    }
    return best;
  }

  Moves Remember(Moves moves) {
    for (const auto& [u, d] : moves) from_[u] = units_.device_of(placement_, u);
    return moves;
  }

  Moves Propose() {
    const double r = seeded::Uniform01(rng_);
    if (step_.critical.empty() || r >= 0.85) return Remember(RandomMove());
    const size_t at = seeded::UniformBelow(rng_, step_.critical.size());
    const OpId v = step_.critical[at];
    if (r < 0.35) {
      const DeviceId d = EarlierDevice(v);
      return d == kNone ? Moves{} : Remember({{units_.unit_of(v), d}});
    }
    if (r < 0.5) return Remember(CriticalRun(at));
    if (r < 0.65) return Remember(Swap(units_.unit_of(v)));
    return Remember(Decongest(placement_.device[v]));
  }

  Moves RandomMove() {
    const int32_t u = static_cast<int32_t>(seeded::UniformBelow(rng_, units_.num_units()));
    const DeviceId d = RandomOtherDevice(rng_, units_, u, units_.device_of(placement_, u));
    return d == kNone ? Moves{} : Moves{{u, d}};
  }

  // Consecutive critical operators that share a device, moved together: one transfer in and out instead of one
  // per operator.
  Moves CriticalRun(size_t at) {
    const OpId first = step_.critical[at];
    const DeviceId here = placement_.device[first];
    DeviceId d = EarlierDevice(first);
    if (d == kNone) d = RandomOtherDevice(rng_, units_, units_.unit_of(first), here);
    if (d == kNone) return {};
    const size_t length = 2 + seeded::UniformBelow(rng_, kMaxRun - 1);
    Moves moves;
    for (size_t i = at; i < step_.critical.size() && moves.size() < length; ++i) {
      const OpId v = step_.critical[i];
      if (placement_.device[v] != here) break;
      const int32_t u = units_.unit_of(v);
      if (!units_.allowed(u, d)) break;
      bool seen = false;
      for (const auto& m : moves) seen = seen || m.first == u;
      if (!seen) moves.emplace_back(u, d);
    }
    return moves;
  }

  Moves Swap(int32_t u) {
    const DeviceId a = units_.device_of(placement_, u);
    const DeviceId d = RandomOtherDevice(rng_, units_, u, a);
    if (d == kNone || members_.on(d).empty()) return {};
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int32_t w = Pick(rng_, members_.on(d));
      if (units_.allowed(w, a)) return {{u, d}, {w, a}};
    }
    return {};
  }

  // Moves a unit that is off the critical chain away from a device the chain runs on, making room there.
  Moves Decongest(DeviceId crowded) {
    if (members_.on(crowded).size() < 2) return {};
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int32_t w = Pick(rng_, members_.on(crowded));
      if (step_.on_critical[units_.ops(w).front()]) continue;
      const DeviceId d = RandomOtherDevice(rng_, units_, w, crowded);
      if (d != kNone) return {{w, d}};
    }
    return {};
  }

  const SearchContext& ctx_;
  const CostModel& costs_;
  const SearchUnits& units_;
  const int32_t num_devices_;
  std::mt19937_64& rng_;
  SimulatorConfig config_;
  Placement placement_;
  DeviceMembers members_;
  AnnealingSchedule schedule_;
  StopRule stop_;
  std::vector<int64_t> params_;
  StepAnalysis step_;
  double value_ = 0;
  double best_value_ = 0;
  bool at_best_ = true;
  Placement best_placement_;
  int64_t last_best_ = 0;
  std::vector<DeviceId> from_;
  std::vector<double> delta_busy_;
  std::vector<int64_t> delta_params_;
  SearchOutcome out_;
};

}  // namespace

absl::StatusOr<SearchOutcome> SearchSimulated(const SearchContext& ctx, Placement start, std::mt19937_64& rng) {
  SimulatedSearch search(ctx, std::move(start), rng);
  return search.Run();
}

}  // namespace placement::search

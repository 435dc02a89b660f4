#include "policy/ilp/latency_ilp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/ilp/latency_model.h"
#include "policy/ilp/milp.h"
#include "policy/ilp/units.h"

namespace placement::ilp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct LatencyMilp {
  Milp milp;
  std::vector<int> x;  // units x devices
  std::vector<int> s;  // per operator
  int c = -1;
  struct Order {
    int col;
    OpId v, w;  // v < w; 1 when v runs first
  };
  std::vector<Order> orders;
  struct Same {
    int col;
    int32_t u, w;
  };
  std::vector<Same> sames;
};

// Builds the program row family by row family, in a fixed order (CBC's path depends on it).
class LatencyMilpBuilder {
 public:
  LatencyMilpBuilder(const LatencyInput& in, double scale, double horizon)
      : in_(in),
        g_(in.g()),
        units_(*in.units),
        n_(units_.num_units()),
        nd_(in.num_devices()),
        scale_(scale),
        horizon_(horizon),
        big_m_(scale * (horizon + in.gap)) {}

  LatencyMilp Build(double lower_bound) {
    AddAssignments();
    for (OpId v = 0; v < g_.num_ops(); ++v) b_.s.push_back(milp().AddColumn(0, scale_ * horizon_, 0, false));
    b_.c = milp().AddColumn(scale_ * lower_bound, scale_ * horizon_, 1, false);
    AddMemoryRows();
    for (EdgeId e = 0; e < g_.num_edges(); ++e) AddEdgeRows(e);
    AddSinkRows();
    AddDisjunctions();
    return std::move(b_);
  }

 private:
  Milp& milp() { return b_.milp; }
  int x(int32_t u, DeviceId d) const { return b_.x[static_cast<size_t>(u) * nd_ + d]; }

  // x[u,d] for the devices u fits, each unit on exactly one.
  void AddAssignments() {
    b_.x.assign(static_cast<size_t>(n_) * nd_, -1);
    for (int32_t u = 0; u < n_; ++u) {
      Milp::Terms assign;
      for (DeviceId d = 0; d < nd_; ++d) {
        if (!in_.fits(u, d)) continue;
        b_.x[static_cast<size_t>(u) * nd_ + d] = milp().AddColumn(0, 1, 0, true);
        assign.emplace_back(x(u, d), 1.0);
      }
      milp().AddRow(1, 1, assign);
    }
  }

  // -dur_v (plus the gap when `gap`), the terms every timing row starts from.
  Milp::Terms MinusDuration(OpId v, bool gap) const {
    Milp::Terms t;
    const int32_t u = units_.unit_of[v];
    for (DeviceId d = 0; d < nd_; ++d) {
      if (x(u, d) >= 0) t.emplace_back(x(u, d), -scale_ * (in_.costs->op_time(v, d) + (gap ? in_.gap : 0.0)));
    }
    return t;
  }

  void AddMemoryRows() {
    for (DeviceId d = 0; d < nd_; ++d) {
      if (units_.capacity[d] == kUnlimitedBytes) continue;
      Milp::Terms row;
      for (int32_t u = 0; u < n_; ++u) {
        if (x(u, d) >= 0) {
          row.emplace_back(x(u, d), static_cast<double>(in_.bytes[u]) / static_cast<double>(units_.capacity[d]));
        }
      }
      milp().AddRow(-kInf, 1, row);
    }
  }

  // s_w >= s_v + dur_v, and the transfer's time more for every pair of devices the edge may cross.
  void AddEdgeRows(EdgeId e) {
    const OpId v = g_.edge(e).src, w = g_.edge(e).dst;
    const int32_t uv = units_.unit_of[v], uw = units_.unit_of[w];
    Milp::Terms base = MinusDuration(v, false);
    base.emplace_back(b_.s[w], 1.0);
    base.emplace_back(b_.s[v], -1.0);
    milp().AddRow(0, kInf, base);
    if (uv == uw) return;
    for (DeviceId a = 0; a < nd_; ++a) {
      for (DeviceId d = 0; d < nd_; ++d) {
        if (a == d || x(uv, a) < 0 || x(uw, d) < 0) continue;
        const double c = scale_ * in_.costs->transfer_time(g_.edge_tensor(e), a, d);
        if (c <= 0) continue;
        Milp::Terms row = base;
        row.emplace_back(x(uv, a), -c);
        row.emplace_back(x(uw, d), -c);
        milp().AddRow(-c, kInf, row);
      }
    }
  }

  // C >= s_v + dur_v for every sink.
  void AddSinkRows() {
    for (OpId v = 0; v < g_.num_ops(); ++v) {
      if (g_.out_end(v) != g_.out_begin(v)) continue;
      Milp::Terms row = MinusDuration(v, false);
      row.emplace_back(b_.c, 1.0);
      row.emplace_back(b_.s[v], -1.0);
      milp().AddRow(0, kInf, row);
    }
  }

  // The column that is 1 when units uv and uw share a device (made once per pair); -1 when they never can.
  int SameColumn(int32_t uv, int32_t uw) {
    int& slot = same_col_[static_cast<size_t>(std::min(uv, uw)) * n_ + std::max(uv, uw)];
    if (slot >= 0) return slot;
    bool shared = false;
    for (DeviceId d = 0; d < nd_; ++d) shared = shared || (x(uv, d) >= 0 && x(uw, d) >= 0);
    if (!shared) return -1;
    slot = milp().AddColumn(0, 1, 0, false);
    b_.sames.push_back({slot, uv, uw});
    for (DeviceId d = 0; d < nd_; ++d) {
      if (x(uv, d) >= 0 && x(uw, d) >= 0) milp().AddRow(-1, kInf, {{slot, 1.0}, {x(uv, d), -1.0}, {x(uw, d), -1.0}});
    }
    return slot;
  }

  // For operators no path orders that may share a device, one order variable o: v first when o = 1, w first
  // when 0, both relaxed when they are on different devices.
  void AddDisjunctions() {
    same_col_.assign(static_cast<size_t>(n_) * n_, -1);
    for (OpId v = 0; v < g_.num_ops(); ++v) {
      for (OpId w = v + 1; w < g_.num_ops(); ++w) {
        if (in_.ordered(v, w)) continue;
        const int32_t uv = units_.unit_of[v], uw = units_.unit_of[w];
        const int same = uv != uw ? SameColumn(uv, uw) : -1;
        if (uv != uw && same < 0) continue;
        AddOrderRows(v, w, same);
      }
    }
  }

  void AddOrderRows(OpId v, OpId w, int same) {
    const int o = milp().AddColumn(0, 1, 0, true);
    b_.orders.push_back({o, v, w});
    const double relaxed = same >= 0 ? 2 * big_m_ : big_m_;
    Milp::Terms first = MinusDuration(v, true);  // v before w when o = 1
    first.insert(first.end(), {{b_.s[w], 1.0}, {b_.s[v], -1.0}, {o, -big_m_}});
    Milp::Terms second = MinusDuration(w, true);  // w before v when o = 0
    second.insert(second.end(), {{b_.s[v], 1.0}, {b_.s[w], -1.0}, {o, big_m_}});
    if (same >= 0) {
      first.emplace_back(same, -big_m_);
      second.emplace_back(same, -big_m_);
    }
    milp().AddRow(-relaxed, kInf, first);
    milp().AddRow(same >= 0 ? -big_m_ : 0.0, kInf, second);
  }

  const LatencyInput& in_;
  const Graph& g_;
  const Units& units_;
  const int32_t n_;
  const int32_t nd_;
  const double scale_;
  const double horizon_;
  const double big_m_;
  LatencyMilp b_;
  std::vector<int> same_col_;
};

LatencyMilp BuildMilp(const LatencyInput& in, double scale, double horizon, double lower_bound) {
  return LatencyMilpBuilder(in, scale, horizon).Build(lower_bound);
}

std::vector<double> StartVector(const LatencyInput& in, const LatencyMilp& b, const std::vector<DeviceId>& device,
                                double scale) {
  std::vector<double> v(b.milp.num_columns(), 0.0);
  for (size_t u = 0; u < device.size(); ++u) v[b.x[u * in.num_devices() + device[u]]] = 1;
  std::vector<double> start;
  std::vector<int32_t> position;
  const double makespan = ListSchedule(in, device, &start, &position);
  for (size_t op = 0; op < start.size(); ++op) v[b.s[op]] = scale * start[op];
  v[b.c] = scale * makespan;
  for (const auto& s : b.sames) v[s.col] = device[s.u] == device[s.w];
  // A device runs its operators in scheduling order.
  for (const auto& o : b.orders) v[o.col] = position[o.v] < position[o.w];
  return v;
}

}  // namespace

absl::StatusOr<LatencyIlpSolution> SolveLatencyIlp(const PlacementProblem& problem, const Budget& budget,
                                                   bool all_buffers) {
  const CostModel& costs = *problem.costs;
  const Graph& g = costs.graph();
  if (g.num_ops() > kMaxLatencyOps) {
    return absl::InvalidArgumentError(absl::StrCat("ilp_latency solves graphs of at most ", kMaxLatencyOps,
                                                   " operators; this one has ", g.num_ops()));
  }
  if (budget.Expired()) return budget.ExpiredStatus();
  const absl::Time deadline =
      budget.deadline == absl::InfiniteFuture() ? absl::Now() + absl::Seconds(kDefaultIlpSeconds) : budget.deadline;
  absl::StatusOr<Units> units = BuildUnits(costs);
  if (!units.ok()) return units.status();
  const LatencyInput in = BuildLatencyInput(costs, *units, problem.simulator.op_gap, all_buffers);
  if (absl::Status s = CheckUnitsFit(g, *units, in.bytes, all_buffers ? "memory for all its buffers" : "parameters");
      !s.ok())
    return s;

  // Warm start: the best of the given start, every single device and the greedy placement.
  std::vector<DeviceId> start;
  double start_value = kInf;
  auto consider = [&](std::vector<DeviceId> cand) {
    if (cand.empty() || !FitsMemory(in, cand)) return;
    for (int32_t u = 0; u < units->num_units(); ++u) {
      if (!in.fits(u, cand[u])) return;
    }
    const double value = ListSchedule(in, cand);
    if (value < start_value) start_value = value, start = std::move(cand);
  };
  if (problem.start != nullptr) consider(FromPlacement(*units, *problem.start));
  for (DeviceId d = 0; d < units->num_devices; ++d) consider(std::vector<DeviceId>(units->num_units(), d));
  consider(GreedyPlacement(in, /*earliest=*/false));
  consider(GreedyPlacement(in, /*earliest=*/true));

  double horizon = Horizon(in);
  if (!start.empty()) horizon = std::min(horizon, start_value);  // no better schedule needs more time
  const double lower = ComputeLowerBound(costs, Objective::kStepTime).value;
  const double scale = horizon > 0 ? 100.0 / horizon : 1.0;
  LatencyMilp b = BuildMilp(in, scale, horizon, std::min(lower, horizon));
  std::vector<double> start_vector;
  if (!start.empty()) start_vector = StartVector(in, b, start, scale);
  MilpOptions options;
  options.max_seconds = absl::ToDoubleSeconds(deadline - absl::Now());
  options.start = start_vector.empty() ? nullptr : &start_vector;
  const MilpResult solved = SolveMilp(b.milp, options, Budget{deadline, budget.cancelled});

  LatencyIlpSolution out;
  out.summary = absl::StrFormat("MILP: %d columns (%d integer), %d rows; %s", b.milp.num_columns(),
                                b.milp.num_integers(), b.milp.num_rows(), solved.Summary());
  if (!solved.has_solution) {
    if (solved.proven_infeasible) {
      return absl::FailedPreconditionError(absl::StrCat("no placement keeps every device within its memory (",
                                                        all_buffers ? "counting every buffer" : "parameters", ")"));
    }
    if (budget.cancelled != nullptr && budget.cancelled->load()) return budget.ExpiredStatus();
    return absl::DeadlineExceededError(
        absl::StrCat("ilp_latency found no placement before the deadline (", out.summary, ")"));
  }
  std::vector<DeviceId> device(units->num_units(), kNone);
  for (int32_t u = 0; u < units->num_units(); ++u) {
    for (DeviceId d = 0; d < in.num_devices(); ++d) {
      const int col = b.x[static_cast<size_t>(u) * in.num_devices() + d];
      if (col >= 0 && solved.solution[col] > 0.5) device[u] = d;
    }
  }
  out.placement = ToPlacement(*units, device);
  out.model_value = solved.objective / scale;
  out.bound = solved.bound / scale;
  out.proven_optimal = solved.proven_optimal;
  if (!start.empty()) {
    out.start = ToPlacement(*units, start);
    out.start_value = start_value;
  } else {
    out.start = out.placement;
    out.start_value = out.model_value;
  }
  return out;
}

absl::StatusOr<PlacerResult> PlaceLatencyIlp(const PlacementProblem& problem, const Budget& budget) {
  if (problem.objective == Objective::kThroughput) {
    return absl::InvalidArgumentError("ilp_latency optimizes the latency and step_time objectives, not throughput");
  }
  if (problem.objective == Objective::kLatency) {
    const Graph& g = problem.graph();
    for (OpId v = 0; v < g.num_ops(); ++v) {
      if (g.is_backward(v)) {
        return absl::InvalidArgumentError(absl::StrCat("the latency objective scores inference graphs, but operator '",
                                                       g.name(v),
                                                       "' is a backward operator; use step_time for training"));
      }
    }
  }
  // One deadline for both models.
  const Budget both{
      budget.deadline == absl::InfiniteFuture() ? absl::Now() + absl::Seconds(kDefaultIlpSeconds) : budget.deadline,
      budget.cancelled};
  std::vector<std::string> notes;
  double bound = -kInf;
  bool proven = false;
  for (bool all_buffers : {false, true}) {
    absl::StatusOr<LatencyIlpSolution> solved = SolveLatencyIlp(problem, both, all_buffers);
    if (!solved.ok()) return solved.status();
    notes.push_back(absl::StrFormat("%s model: makespan %.6g (warm start %.6g); %s",
                                    all_buffers ? "all-buffers" : "parameter-memory", solved->model_value,
                                    solved->start_value, solved->summary));
    if (!all_buffers) {  // only the relaxed memory model bounds every placement that fits
      bound = solved->bound;
      proven = solved->proven_optimal;
    }
    // The simulator decides: the MILP's placement or the warm start, whichever is quicker and fits.
    absl::StatusOr<PlacerResult> best;
    for (const Placement* p : {&solved->placement, &solved->start}) {
      absl::StatusOr<PlacerResult> r = ScorePlacement(problem, *p, "ilp_latency");
      if (!r.ok()) return r.status();
      if (r->evaluation.fits_memory && (!best.ok() || r->evaluation.value < best->evaluation.value))
        best = std::move(r);
    }
    if (!best.ok()) {
      notes.push_back(
          "the simulator reports a device out of memory (activations): solving again with every buffer charged");
      continue;
    }
    notes.push_back(
        absl::StrFormat("simulated %.6g (the simulator queues transfers on shared links and schedules by "
                        "topological priority)",
                        best->evaluation.value));
    const double value = best->evaluation.value;
    best->best_bound = std::max(best->best_bound, std::min(bound, value));
    best->proven_optimal = proven && value <= bound * (1 + 1e-9) + 1e-12;
    best->notes = std::move(notes);
    return best;
  }
  return absl::FailedPreconditionError(
      "no placement the MILP finds fits in memory when simulated, even charging every buffer");
}

}  // namespace placement::ilp

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

LatencyMilp BuildMilp(const LatencyInput& in, double scale, double horizon, double lower_bound) {
  const Graph& g = in.g();
  const Units& units = *in.units;
  const int32_t n = units.num_units(), num_devices = in.num_devices();
  const double big_m = scale * (horizon + in.gap);
  LatencyMilp b;
  Milp& milp = b.milp;
  b.x.assign(static_cast<size_t>(n) * num_devices, -1);
  auto x = [&](int32_t u, DeviceId d) { return b.x[static_cast<size_t>(u) * num_devices + d]; };
  for (int32_t u = 0; u < n; ++u) {
    Milp::Terms assign;
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (!in.fits(u, d)) continue;
      b.x[static_cast<size_t>(u) * num_devices + d] = milp.AddColumn(0, 1, 0, true);
      assign.emplace_back(x(u, d), 1.0);
    }
    milp.AddRow(1, 1, assign);
  }
  for (OpId v = 0; v < g.num_ops(); ++v) b.s.push_back(milp.AddColumn(0, scale * horizon, 0, false));
  b.c = milp.AddColumn(scale * lower_bound, scale * horizon, 1, false);
  // -dur_v (plus the gap when `gap`), the terms every timing row starts from.
  auto minus_duration = [&](OpId v, bool gap) {
    Milp::Terms t;
    const int32_t u = units.unit_of[v];
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (x(u, d) >= 0) t.emplace_back(x(u, d), -scale * (in.costs->op_time(v, d) + (gap ? in.gap : 0.0)));
    }
    return t;
  };
  for (DeviceId d = 0; d < num_devices; ++d) {
    if (units.capacity[d] == kUnlimitedBytes) continue;
    Milp::Terms row;
    for (int32_t u = 0; u < n; ++u) {
      if (x(u, d) >= 0) row.emplace_back(x(u, d), static_cast<double>(in.bytes[u]) / static_cast<double>(units.capacity[d]));
    }
    milp.AddRow(-kInf, 1, row);
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const OpId v = g.edge(e).src, w = g.edge(e).dst;
    const int32_t uv = units.unit_of[v], uw = units.unit_of[w];
    Milp::Terms base = minus_duration(v, false);
    base.emplace_back(b.s[w], 1.0);
    base.emplace_back(b.s[v], -1.0);
    milp.AddRow(0, kInf, base);
    if (uv == uw) continue;
    for (DeviceId a = 0; a < num_devices; ++a) {
      for (DeviceId d = 0; d < num_devices; ++d) {
        if (a == d || x(uv, a) < 0 || x(uw, d) < 0) continue;
        const double c = scale * in.costs->transfer_time(g.edge_tensor(e), a, d);
        if (c <= 0) continue;
        Milp::Terms row = base;
        row.emplace_back(x(uv, a), -c);
        row.emplace_back(x(uw, d), -c);
        milp.AddRow(-c, kInf, row);
      }
    }
  }
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.out_end(v) != g.out_begin(v)) continue;
    Milp::Terms row = minus_duration(v, false);
    row.emplace_back(b.c, 1.0);
    row.emplace_back(b.s[v], -1.0);
    milp.AddRow(0, kInf, row);
  }
  // Disjunctions for operators no path orders that may share a device.
  std::vector<int> same_col(static_cast<size_t>(n) * n, -1);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    for (OpId w = v + 1; w < g.num_ops(); ++w) {
      if (in.ordered(v, w)) continue;
      const int32_t uv = units.unit_of[v], uw = units.unit_of[w];
      int same = -1;
      if (uv != uw) {
        int& slot = same_col[static_cast<size_t>(std::min(uv, uw)) * n + std::max(uv, uw)];
        if (slot < 0) {
          bool shared = false;
          for (DeviceId d = 0; d < num_devices; ++d) shared = shared || (x(uv, d) >= 0 && x(uw, d) >= 0);
          if (!shared) continue;
          slot = milp.AddColumn(0, 1, 0, false);
          b.sames.push_back({slot, uv, uw});
          for (DeviceId d = 0; d < num_devices; ++d) {
            if (x(uv, d) >= 0 && x(uw, d) >= 0) milp.AddRow(-1, kInf, {{slot, 1.0}, {x(uv, d), -1.0}, {x(uw, d), -1.0}});
          }
        }
        same = slot;
      }
      const int o = milp.AddColumn(0, 1, 0, true);
      b.orders.push_back({o, v, w});
      const double relaxed = same >= 0 ? 2 * big_m : big_m;
      Milp::Terms first = minus_duration(v, true);  // v before w when o = 1
      first.insert(first.end(), {{b.s[w], 1.0}, {b.s[v], -1.0}, {o, -big_m}});
      Milp::Terms second = minus_duration(w, true);  // w before v when o = 0
      second.insert(second.end(), {{b.s[v], 1.0}, {b.s[w], -1.0}, {o, big_m}});
      if (same >= 0) {
        first.emplace_back(same, -big_m);
        second.emplace_back(same, -big_m);
      }
      milp.AddRow(-relaxed, kInf, first);
      milp.AddRow(same >= 0 ? -big_m : 0.0, kInf, second);
    }
  }
  return b;
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

absl::StatusOr<LatencyIlpSolution> SolveLatencyIlp(const PlacementProblem& problem, const Budget& budget, bool all_buffers) {
  const CostModel& costs = *problem.costs;
  const Graph& g = costs.graph();
  if (g.num_ops() > kMaxLatencyOps) {
    return absl::InvalidArgumentError(absl::StrCat("ilp_latency solves graphs of at most ", kMaxLatencyOps,
                                                   " operators; this one has ", g.num_ops()));
  }
  if (budget.Expired()) return budget.ExpiredStatus();
  const absl::Time deadline = budget.deadline == absl::InfiniteFuture() ? absl::Now() + absl::Seconds(kDefaultIlpSeconds) : budget.deadline;
  absl::StatusOr<Units> units = BuildUnits(costs);
  if (!units.ok()) return units.status();
  const LatencyInput in = BuildLatencyInput(costs, *units, problem.simulator.op_gap, all_buffers);
  if (absl::Status s = CheckUnitsFit(g, *units, in.bytes, all_buffers ? "memory for all its buffers" : "parameters"); !s.ok()) return s;

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
  out.summary = absl::StrFormat("MILP: %d columns (%d integer), %d rows; %s", b.milp.num_columns(), b.milp.num_integers(),
                                b.milp.num_rows(), solved.Summary());
  if (!solved.has_solution) {
    if (solved.proven_infeasible) {
      return absl::FailedPreconditionError(absl::StrCat("no placement keeps every device within its memory (",
                                                        all_buffers ? "counting every buffer" : "parameters", ")"));
    }
    if (budget.cancelled != nullptr && budget.cancelled->load()) return budget.ExpiredStatus();
    return absl::DeadlineExceededError(absl::StrCat("ilp_latency found no placement before the deadline (", out.summary, ")"));
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
        return absl::InvalidArgumentError(absl::StrCat("the latency objective scores inference graphs, but operator '", g.name(v),
                                                       "' is a backward operator; use step_time for training"));
      }
    }
  }
  // One deadline for both models.
  const Budget both{budget.deadline == absl::InfiniteFuture() ? absl::Now() + absl::Seconds(kDefaultIlpSeconds) : budget.deadline,
                    budget.cancelled};
  std::vector<std::string> notes;
  double bound = -kInf;
  bool proven = false;
  for (bool all_buffers : {false, true}) {
    absl::StatusOr<LatencyIlpSolution> solved = SolveLatencyIlp(problem, both, all_buffers);
    if (!solved.ok()) return solved.status();
    notes.push_back(absl::StrFormat("%s model: makespan %.6g (warm start %.6g); %s", all_buffers ? "all-buffers" : "parameter-memory",
                                    solved->model_value, solved->start_value, solved->summary));
    if (!all_buffers) {  // only the relaxed memory model bounds every placement that fits
      bound = solved->bound;
      proven = solved->proven_optimal;
    }
    // The simulator decides: the MILP's placement or the warm start, whichever is quicker and fits.
    absl::StatusOr<PlacerResult> best;
    for (const Placement* p : {&solved->placement, &solved->start}) {
      absl::StatusOr<PlacerResult> r = ScorePlacement(problem, *p, "ilp_latency");
      if (!r.ok()) return r.status();
      if (r->evaluation.fits_memory && (!best.ok() || r->evaluation.value < best->evaluation.value)) best = std::move(r);
    }
    if (!best.ok()) {
      notes.push_back("the simulator reports a device out of memory (activations): solving again with every buffer charged");
      continue;
    }
    notes.push_back(absl::StrFormat("simulated %.6g (the simulator queues transfers on shared links and schedules by "
                                    "topological priority)", best->evaluation.value));
    const double value = best->evaluation.value;
    best->best_bound = std::max(best->best_bound, std::min(bound, value));
    best->proven_optimal = proven && value <= bound * (1 + 1e-9) + 1e-12;
    best->notes = std::move(notes);
    return best;
  }
  return absl::FailedPreconditionError("no placement the MILP finds fits in memory when simulated, even charging every buffer");
}

}  // namespace placement::ilp

#include "policy/ilp/throughput_ilp.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "graph/status_macros.h"
#include "graph/units.h"
#include "policy/ilp/milp.h"
#include "policy/ilp/symmetry.h"
#include "policy/ilp/throughput_model.h"
#include "policy/ilp/units.h"

namespace placement::ilp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct ThroughputMilp {
  Milp milp;
  std::vector<int> x;  // units x devices, -1 where absent
  int t = -1;
  struct Link {
    int col;
    int32_t tensor;
    DeviceId device;
    bool out;
  };
  std::vector<Link> links;
  std::vector<RunningSum> running;  // symmetry helpers: running[i] = sum_{j<=unit} x[j,device]
};

ThroughputMilp BuildMilp(const ThroughputModel& m, const std::vector<std::vector<DeviceId>>& classes, double scale,
                         double lower_bound) {
  const Units& units = *m.units;
  const int32_t n = units.num_units();
  const int32_t num_devices = m.num_devices();
  ThroughputMilp b;
  Milp& milp = b.milp;
  b.x.assign(static_cast<size_t>(n) * num_devices, -1);
  auto x = [&](int32_t u, DeviceId d) { return b.x[static_cast<size_t>(u) * num_devices + d]; };
  for (int32_t u = 0; u < n; ++u) {
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (m.fits(u, d)) b.x[static_cast<size_t>(u) * num_devices + d] = milp.AddColumn(0, 1, 0, true);
    }
  }
  b.t = milp.AddColumn(lower_bound * scale, kInf, 1, false);
  std::vector<Milp::Terms> load(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) load[d].emplace_back(b.t, -1.0);
  for (int32_t u = 0; u < n; ++u) {
    Milp::Terms assign;
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (x(u, d) < 0) continue;
      assign.emplace_back(x(u, d), 1.0);
      load[d].emplace_back(x(u, d), scale * units.time_on(u, d));
    }
    milp.AddRow(1, 1, assign);
  }
  for (int32_t t = 0; t < static_cast<int32_t>(m.tensors.size()); ++t) {
    const CrossingTensor& tensor = m.tensors[t];
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (!m.pays[d]) continue;
      const int xp = x(tensor.producer, d);
      bool reader_absent = false, reader_present = false;
      for (int32_t r : tensor.readers) (x(r, d) < 0 ? reader_absent : reader_present) = true;
      if (xp >= 0) {  // d sends t when p is on d and some reader is not
        const int out = milp.AddColumn(0, 1, 0, false);
        b.links.push_back({out, t, d, true});
        load[d].emplace_back(out, scale * tensor.cost);
        if (reader_absent) {
          milp.AddRow(0, kInf, {{out, 1.0}, {xp, -1.0}});
        } else {
          for (int32_t r : tensor.readers) milp.AddRow(0, kInf, {{out, 1.0}, {xp, -1.0}, {x(r, d), 1.0}});
        }
      }
      if (reader_present) {  // d receives t when a reader is on d and p is not
        const int in = milp.AddColumn(0, 1, 0, false);
        b.links.push_back({in, t, d, false});
        load[d].emplace_back(in, scale * tensor.cost);
        for (int32_t r : tensor.readers) {
          if (x(r, d) < 0) continue;
          Milp::Terms row = {{in, 1.0}, {x(r, d), -1.0}};
          if (xp >= 0) row.emplace_back(xp, 1.0);
          milp.AddRow(0, kInf, row);
        }
      }
    }
  }
  for (DeviceId d = 0; d < num_devices; ++d) milp.AddRow(-kInf, 0, load[d]);
  for (DeviceId d = 0; d < num_devices; ++d) {
    const int64_t cap = units.capacity[d];
    if (cap == kUnlimitedBytes) continue;
    Milp::Terms row;
    int64_t total = 0;
    for (int32_t u = 0; u < n; ++u) {
      if (x(u, d) < 0) continue;
      row.emplace_back(x(u, d), static_cast<double>(m.bytes[u]) / static_cast<double>(cap));
      total += m.bytes[u];
    }
    if (total > cap) milp.AddRow(-kInf, 1, row);
  }
  // Symmetry: unit i may use the p-th device of a class only when a lower unit uses the (p-1)-th.
  b.running = AddSymmetryRows(milp, classes, n, [&](int32_t i, DeviceId d) {
    return x(i, d) >= 0 ? Milp::Terms{{x(i, d), 1.0}} : Milp::Terms{};
  });
  return b;
}

// The MILP's columns for an assignment.
std::vector<double> StartVector(const ThroughputMilp& b, const ThroughputModel& m, const std::vector<DeviceId>& device,
                                double scale) {
  const int32_t num_devices = m.num_devices();
  std::vector<double> v(b.milp.num_columns(), 0.0);
  for (size_t u = 0; u < device.size(); ++u) v[b.x[u * num_devices + device[u]]] = 1;
  v[b.t] = scale * m.MaxLoad(device);
  for (const auto& link : b.links) {
    const CrossingTensor& t = m.tensors[link.tensor];
    const bool here = device[t.producer] == link.device;
    bool reader_here = false, reader_elsewhere = false;
    for (int32_t r : t.readers) (device[r] == link.device ? reader_here : reader_elsewhere) = true;
    v[link.col] = link.out ? (here && reader_elsewhere) : (!here && reader_here);
  }
  SetRunningSums(b.running, device, num_devices, v);
  return v;
}

// The better of the problem's start and the contiguous split in unit order (a greedy split when neither
// exists), improved by the local search for up to a quarter of the time left; empty when nothing fits.
std::vector<DeviceId> WarmStart(const PlacementProblem& problem, const Units& units, const ThroughputModel& model,
                                absl::Time deadline, double& value, std::vector<std::string>& notes) {
  std::vector<DeviceId> start;
  value = kInf;
  auto consider = [&](std::vector<DeviceId> cand, absl::string_view what) {
    if (cand.empty() || !model.FitsMemory(cand)) return;
    for (int32_t u = 0; u < units.num_units(); ++u) {
      if (!model.fits(u, cand[u])) return;
    }
    const double v = model.MaxLoad(cand);
    notes.push_back(absl::StrFormat("%s: %.6g", what, v));
    if (v < value) {
      value = v;
      start = std::move(cand);
    }
  };
  if (problem.start != nullptr) consider(FromPlacement(units, *problem.start), "given start");
  consider(ContiguousSplit(model), "contiguous split in unit order");
  if (start.empty()) consider(GreedySplit(model), "greedy split");
  if (start.empty()) return start;
  const absl::Time began = absl::Now();
  start = LocalSearch(model, std::move(start), problem.seed, /*rounds=*/1000, began + (deadline - began) / 4);
  value = model.MaxLoad(start);
  notes.push_back(absl::StrFormat("local search: %.6g in %.2f s", value, absl::ToDoubleSeconds(absl::Now() - began)));
  return start;
}

// The units, within the size the MILP is for.
absl::StatusOr<Units> CheckedUnits(const CostModel& costs) {
  ASSIGN_OR_RETURN(Units units, BuildUnits(costs));
  if (units.num_units() > kMaxThroughputUnits) {
    return absl::InvalidArgumentError(absl::StrCat("ilp_throughput solves graphs of at most ", kMaxThroughputUnits,
                                                   " units (colocation groups and lone operators); this one has ",
                                                   units.num_units()));
  }
  return units;
}

// Each unit within some device, and the parameters within the devices together.
absl::Status CheckParametersFit(const Graph& g, const Units& units, const ThroughputModel& model) {
  RETURN_IF_ERROR(CheckUnitsFit(g, units, model.bytes, "parameters"));
  if (std::any_of(units.capacity.begin(), units.capacity.end(), [](int64_t c) { return c == kUnlimitedBytes; })) {
    return absl::OkStatus();
  }
  const int64_t need = std::accumulate(model.bytes.begin(), model.bytes.end(), int64_t{0});
  const int64_t have = std::accumulate(units.capacity.begin(), units.capacity.end(), int64_t{0});
  if (need <= have) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("the graph needs ", FormatBytes(static_cast<double>(need)),
                                                    " of parameters but the devices hold ",
                                                    FormatBytes(static_cast<double>(have)), " together"));
}

// The MILP's device of every unit, when it fits memory and beats `best`; else `best`.
std::vector<DeviceId> BetterOfSolution(const ThroughputMilp& b, const ThroughputModel& model, const Units& units,
                                       const MilpResult& solved, std::vector<DeviceId> best) {
  if (!solved.has_solution) return best;
  std::vector<DeviceId> device(units.num_units(), kNone);
  for (int32_t u = 0; u < units.num_units(); ++u) {
    for (DeviceId d = 0; d < units.num_devices; ++d) {
      const int col = b.x[static_cast<size_t>(u) * units.num_devices + d];
      if (col >= 0 && solved.solution[col] > 0.5) device[u] = d;
    }
  }
  if (model.FitsMemory(device) && (best.empty() || model.MaxLoad(device) <= model.MaxLoad(best))) return device;
  return best;
}

absl::Status NothingFound(const MilpResult& solved, const Budget& budget) {
  if (solved.proven_infeasible) {
    return absl::FailedPreconditionError("no placement keeps every device within its memory (the MILP is infeasible)");
  }
  if (budget.cancelled != nullptr && budget.cancelled->load()) return budget.ExpiredStatus();
  return absl::DeadlineExceededError(
      absl::StrCat("ilp_throughput found no placement that fits before the deadline (", solved.Summary(), ")"));
}

}  // namespace

absl::StatusOr<PlacerResult> PlaceThroughputIlp(const PlacementProblem& problem, const Budget& budget,
                                                const ThroughputIlpOptions& ilp_options) {
  if (problem.objective != Objective::kThroughput) {
    return absl::InvalidArgumentError(
        absl::StrCat("ilp_throughput optimizes the throughput objective, not ", ObjectiveName(problem.objective)));
  }
  if (budget.Expired()) return budget.ExpiredStatus();
  const absl::Time began = absl::Now();
  const CostModel& costs = *problem.costs;
  ASSIGN_OR_RETURN(const Units units, CheckedUnits(costs));
  const ThroughputModel model = BuildThroughputModel(costs, units);  // refers to `units`, which stays put
  RETURN_IF_ERROR(CheckParametersFit(costs.graph(), units, model));
  const absl::Time deadline =
      budget.deadline == absl::InfiniteFuture() ? began + absl::Seconds(kDefaultIlpSeconds) : budget.deadline;
  std::vector<std::string> notes;
  if (!model.exact) {
    notes.push_back(
        "transfer times depend on the devices: the model charges each tensor its slowest transfer, so its "
        "loads bound the true ones from above and its bound is not used");
  }
  double start_value = kInf;
  std::vector<DeviceId> start;
  if (ilp_options.warm_start) start = WarmStart(problem, units, model, deadline, start_value, notes);

  // The MILP, with times scaled so that the objective is about 100 (CBC's tolerances are absolute).
  const LowerBound generic = ComputeLowerBound(costs, Objective::kThroughput);
  const double reference = start.empty() ? generic.value : start_value;
  const double scale = reference > 0 ? 100.0 / reference : 1.0;
  const std::vector<std::vector<DeviceId>> classes = InterchangeableDevices(costs.topology(), units);
  ThroughputMilp b = BuildMilp(model, classes, scale, model.exact ? generic.value : 0.0);
  std::vector<double> start_vector;
  if (!start.empty()) {
    Canonicalize(classes, units.num_units(), start);
    start_vector = StartVector(b, model, start, scale);
  }
  MilpOptions options;
  options.max_seconds = absl::ToDoubleSeconds(deadline - absl::Now());
  options.start = start_vector.empty() ? nullptr : &start_vector;
  const MilpResult solved = SolveMilp(b.milp, options, Budget{deadline, budget.cancelled});
  notes.push_back(absl::StrFormat("MILP: %d columns (%d integer), %d rows, %d nonzeros; %s", b.milp.num_columns(),
                                  b.milp.num_integers(), b.milp.num_rows(), b.milp.num_nonzeros(), solved.Summary()));
  const std::vector<DeviceId> best = BetterOfSolution(b, model, units, solved, start);
  if (best.empty()) return NothingFound(solved, budget);
  ASSIGN_OR_RETURN(PlacerResult result, ScorePlacement(problem, ToPlacement(units, best), "ilp_throughput"));
  if (model.exact) {
    result.best_bound = std::max(result.best_bound, std::min(solved.bound / scale, result.evaluation.value));
    result.proven_optimal = solved.proven_optimal;
  }
  result.notes = std::move(notes);
  return result;
}

}  // namespace placement::ilp

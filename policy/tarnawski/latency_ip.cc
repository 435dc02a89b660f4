#include "policy/tarnawski/latency_ip.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "graph/units.h"
#include "policy/ilp/milp.h"
#include "policy/tarnawski/ip_program.h"
#include "policy/tarnawski/search.h"

namespace placement::tarnawski {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A latency no allowed split exceeds: every operator at its slowest after one another, every tensor paid by its
// producer and each reading unit.
double Horizon(const Instance& in, const TarnawskiLatency& model) {
  const Graph& g = in.graph();
  double h = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    double slowest = 0, cost = 0;
    for (DeviceId d = 0; d < in.units.num_devices; ++d) {
      if (in.costs->can_run(v, d)) slowest = std::max(slowest, in.costs->op_time(v, d));
    }
    for (TensorId t = g.first_output(v); t < g.first_output(v + 1); ++t) {
      for (DeviceId a : in.accelerators) cost = std::max(cost, model.BoundaryCost(t, a));
    }
    h += slowest + cost * (1 + g.out_end(v) - g.out_begin(v));
  }
  return h;
}

}  // namespace

IpSolution SolveLatencyIp(const Instance& in, int32_t q, const std::vector<DeviceId>* start, const Budget& budget) {
  SplitScorer scorer(in);
  double horizon = Horizon(in, scorer.model());
  double start_value = kInf;
  if (start != nullptr && !start->empty()) {
    start_value = scorer.Latency(*start);
    if (start_value == kInf) start = nullptr;  // not a split the program holds
    horizon = std::min(horizon, start_value * (1 + 1e-9));
  } else {
    start = nullptr;
  }
  const double lower = ComputeLowerBound(*in.costs, Objective::kLatency, CostModelKind::kTarnawski).value;
  LatencyProgram program(in, scorer.model(), q, horizon, lower);
  std::vector<double> start_vector;
  if (start != nullptr) {
    std::vector<DeviceId> canonical = program.MoveFreeUnitsToCpu(*start);
    ilp::Canonicalize(program.classes(), in.num_units(), canonical);
    const double value = scorer.Latency(canonical);  // and the finish times StartVector reads
    start_vector = program.StartVector(canonical, scorer.model(), value);
  }
  ilp::MilpOptions options;
  options.max_seconds = absl::ToDoubleSeconds(budget.deadline - absl::Now());
  options.start = start_vector.empty() ? nullptr : &start_vector;
  const ilp::MilpResult solved = ilp::SolveMilp(program.milp(), options, budget);

  IpSolution out;
  out.summary =
      absl::StrFormat("program (q = %d): %d columns (%d integer), %d rows; %s", q, program.milp().num_columns(),
                      program.milp().num_integers(), program.milp().num_rows(), solved.Summary());
  if (solved.has_solution) {
    out.split = program.Split(solved.solution);
    out.value = solved.objective / program.scale();
  }
  out.bound = std::isfinite(solved.bound) ? solved.bound / program.scale() : -kInf;
  out.proven_optimal = solved.proven_optimal;
  out.proven_infeasible = solved.proven_infeasible;
  return out;
}

namespace {

// The problem's start or the greedy split, improved by the search for a quarter of the time; empty when neither
// exists (the greedy split runs out of accelerators and no CPU may take the rest).
std::vector<DeviceId> WarmStart(const PlacementProblem& problem, const Instance& in, absl::Time deadline,
                                const Budget& budget, std::vector<std::string>& notes) {
  absl::StatusOr<std::vector<DeviceId>> start = StartSplit(problem, in);
  if (!start.ok()) {
    notes.push_back(absl::StrCat("no warm start: ", start.status().message()));
    return {};
  }
  SplitScorer scorer(in);
  const double first = scorer.Latency(*start);
  const absl::Time began = absl::Now();
  SearchOptions options;
  options.seed = problem.seed;
  const SearchOutcome found =
      SearchSplit(in, *std::move(start), options, Budget{began + (deadline - began) / 4, budget.cancelled});
  notes.push_back(absl::StrFormat("warm start: %.6g, %.6g after %.2f s of tarnawski_search", first, found.latency,
                                  absl::ToDoubleSeconds(absl::Now() - began)));
  return found.split;
}

// The better of the program's split and the warm start by their model, among those it allows and that fit.
std::vector<DeviceId> Better(const Instance& in, const std::vector<DeviceId>& a, const std::vector<DeviceId>& b,
                             double* value) {
  SplitScorer scorer(in);
  std::vector<DeviceId> best;
  *value = kInf;
  for (const std::vector<DeviceId>* split : {&a, &b}) {
    if (split->empty() || !in.FitsMemory(*split)) continue;
    const double v = scorer.Latency(*split);
    if (v < *value) {
      *value = v;
      best = *split;
    }
  }
  return best;
}

// What memory asks for when the program is infeasible: the units no CPU may run and the accelerators' room.
absl::Status NoSplitFits(const Instance& in, const std::string& algorithm) {
  int64_t need = 0;
  for (int32_t u = 0; u < in.num_units(); ++u) need += in.cpu_of[u] == kNone ? in.bytes[u] : 0;
  std::string room;
  for (DeviceId a : in.accelerators) absl::StrAppend(&room, room.empty() ? "" : ", ", in.DescribeAccelerator(a));
  return absl::FailedPreconditionError(absl::StrCat(algorithm,
                                                    ": no split keeps every accelerator within its memory: the "
                                                    "operators no CPU may run need ",
                                                    FormatBytes(static_cast<double>(need)),
                                                    " of parameters in all, on ", room));
}

}  // namespace

absl::StatusOr<PlacerResult> PlaceLatencyIp(const PlacementProblem& problem, const Budget& budget, int32_t q,
                                            std::string algorithm) {
  if (budget.Expired()) return budget.ExpiredStatus();
  absl::StatusOr<Instance> in = BuildInstance(problem);
  if (!in.ok()) return in.status();
  if (in->graph().num_ops() > kMaxIpOps) {
    return absl::InvalidArgumentError(absl::StrCat(algorithm, " solves graphs of at most ", kMaxIpOps,
                                                   " operators; this one has ", in->graph().num_ops(),
                                                   " (tarnawski_search takes any size)"));
  }
  const absl::Time deadline = budget.deadline == absl::InfiniteFuture()
                                  ? absl::Now() + absl::Seconds(ilp::kDefaultIlpSeconds)
                                  : budget.deadline;
  std::vector<std::string> notes;
  const std::vector<DeviceId> start = WarmStart(problem, *in, deadline, budget, notes);
  const IpSolution solved = SolveLatencyIp(*in, q, &start, Budget{deadline, budget.cancelled});
  notes.push_back(solved.summary);
  double value = kInf;
  const std::vector<DeviceId> best = Better(*in, solved.split, start, &value);
  if (best.empty()) {
    if (solved.proven_infeasible) return NoSplitFits(*in, algorithm);
    if (budget.cancelled != nullptr && budget.cancelled->load()) return budget.ExpiredStatus();
    return absl::DeadlineExceededError(
        absl::StrCat(algorithm, " found no split before the deadline (", solved.summary, ")"));
  }
  absl::StatusOr<PlacerResult> result = Answer(problem, *in, best, std::move(algorithm));
  if (!result.ok()) return result.status();
  const double tolerance = 1e-7 * std::max(1.0, value);
  result->best_bound = std::max(result->best_bound, std::min(solved.bound, value));
  result->proven_optimal = value <= solved.bound + tolerance;
  notes.push_back(absl::StrFormat(
      "bound %.6g over %s", result->best_bound,
      q == 1 ? "every contiguous split" : absl::StrCat("splits of at most ", q, " pieces per accelerator")));
  result->notes = std::move(notes);
  return result;
}

}  // namespace placement::tarnawski

#include "policy/tarnawski/instance.h"

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/units.h"
#include "policy/tarnawski/greedy.h"
#include "policy/tarnawski/interval_split.h"

namespace placement::tarnawski {
namespace {

absl::Status CheckProblem(const PlacementProblem& problem) {
  if (problem.costs == nullptr) return absl::InvalidArgumentError("the problem has no graph and topology");
  if (problem.cost_model != CostModelKind::kTarnawski || problem.objective != Objective::kLatency) {
    return absl::InvalidArgumentError(
        absl::StrCat("the Tarnawski placers optimize the latency objective under the tarnawski "
                     "cost model, not ",
                     ObjectiveName(problem.objective), " under the ", CostModelName(problem.cost_model), " one"));
  }
  const Graph& g = problem.graph();
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.is_backward(v)) {
      return absl::InvalidArgumentError(absl::StrCat("the latency objective scores inference graphs, but operator '",
                                                     g.name(v), "' is a backward operator"));
    }
  }
  return absl::OkStatus();
}

// FAILED_PRECONDITION when a unit that no CPU may run fits no accelerator, naming the largest it may use.
absl::Status CheckUnitsPlaceable(const Instance& in) {
  for (int32_t u = 0; u < in.num_units(); ++u) {
    if (in.cpu_of[u] != kNone) continue;
    bool fits = false;
    DeviceId largest = kNone;  // BuildUnits saw to it that some accelerator may run the unit
    for (DeviceId a : in.accelerators) {
      fits = fits || in.FitsAccelerator(u, a);
      if (in.units.allowed(u, a) && (largest == kNone || in.units.capacity[a] > in.units.capacity[largest]))
        largest = a;
    }
    if (fits || largest == kNone) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(in.units.Describe(in.graph(), u), " needs ", FormatBytes(static_cast<double>(in.bytes[u])),
                     " of parameters on an accelerator (no CPU may run it), more than the largest it may use, ",
                     in.DescribeAccelerator(largest), ", holds"));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<int64_t> Instance::Used(absl::Span<const DeviceId> unit_device) const {
  std::vector<int64_t> used(units.num_devices, 0);
  for (int32_t u = 0; u < num_units(); ++u) used[unit_device[u]] += bytes[u];
  return used;
}

bool Instance::FitsMemory(absl::Span<const DeviceId> unit_device) const {
  const std::vector<int64_t> used = Used(unit_device);
  for (DeviceId a : accelerators) {
    if (used[a] > units.capacity[a]) return false;
  }
  return true;
}

std::string Instance::DescribeAccelerator(DeviceId a) const {
  const int64_t capacity = units.capacity[a];
  return absl::StrCat("accelerator '", costs->topology().device(a).name, "' (",
                      capacity == ilp::kUnlimitedBytes ? "unlimited" : FormatBytes(static_cast<double>(capacity)), ")");
}

absl::StatusOr<Instance> BuildInstance(const PlacementProblem& problem) {
  if (absl::Status s = CheckProblem(problem); !s.ok()) return s;
  Instance in;
  in.costs = problem.costs;
  absl::StatusOr<ilp::Units> units = ilp::BuildUnits(*problem.costs);
  if (!units.ok()) return units.status();
  in.units = *std::move(units);
  const Graph& g = problem.graph();
  std::vector<int64_t> params(g.num_ops());
  for (OpId v = 0; v < g.num_ops(); ++v) params[v] = g.param_bytes(v);
  in.bytes = ilp::UnitBytes(in.units, params);
  const Topology& topo = problem.topology();
  in.is_accelerator.resize(topo.num_devices());
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    in.is_accelerator[d] = topo.device(d).type != DeviceType::kCpu;
    if (in.is_accelerator[d]) in.accelerators.push_back(d);
  }
  in.cpu_of.assign(in.num_units(), kNone);
  for (int32_t u = 0; u < in.num_units(); ++u) {
    for (DeviceId d = 0; d < topo.num_devices(); ++d) {
      if (in.is_accelerator[d] || !in.units.allowed(u, d)) continue;
      if (in.cpu_of[u] == kNone || in.units.time_on(u, d) < in.units.time_on(u, in.cpu_of[u])) in.cpu_of[u] = d;
    }
  }
  if (absl::Status s = CheckUnitsPlaceable(in); !s.ok()) return s;
  return in;
}

SplitScorer::SplitScorer(const Instance& instance)
    : instance_(instance), model_(*instance.costs), op_device_(instance.graph().num_ops(), 0) {}

double SplitScorer::Latency(absl::Span<const DeviceId> unit_device) {
  for (size_t v = 0; v < op_device_.size(); ++v) op_device_[v] = unit_device[instance_.units.unit_of[v]];
  return model_.Latency(op_device_);
}

bool SplitScorer::Contiguous() const {
  for (DeviceId a : instance_.accelerators) {
    if (model_.pieces(a) > 1) return false;
  }
  return true;
}

absl::StatusOr<std::vector<DeviceId>> StartSplit(const PlacementProblem& problem, const Instance& instance) {
  absl::StatusOr<std::vector<DeviceId>> greedy = GreedySplit(instance);
  SplitScorer scorer(instance);
  std::vector<DeviceId> best;
  double best_value = std::numeric_limits<double>::infinity();
  auto consider = [&](std::vector<DeviceId> split) {
    if (split.empty() || !instance.FitsMemory(split)) return;
    const double value = scorer.Latency(split);
    if (value < best_value && scorer.Contiguous()) {
      best_value = value;
      best = std::move(split);
    }
  };
  if (problem.start != nullptr) consider(ilp::FromPlacement(instance.units, *problem.start));
  if (greedy.ok()) consider(*greedy);
  for (BlockOrder order : {BlockOrder::kDepthFirst, BlockOrder::kBreadthFirst}) {
    consider(IntervalSplit(instance, OrderedBlocks(instance, order), scorer.model()));
  }
  if (best.empty()) return greedy.ok() ? absl::InternalError("the greedy split is not contiguous") : greedy.status();
  return best;
}

absl::StatusOr<PlacerResult> Answer(const PlacementProblem& problem, const Instance& instance,
                                    const std::vector<DeviceId>& unit_device, std::string algorithm) {
  return ScorePlacement(problem, ilp::ToPlacement(instance.units, unit_device), std::move(algorithm));
}

}  // namespace placement::tarnawski

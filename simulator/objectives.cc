#include "simulator/objectives.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

constexpr std::pair<Objective, absl::string_view> kNames[] = {
    {Objective::kStepTime, "step_time"},
    {Objective::kThroughput, "throughput"},
    {Objective::kLatency, "latency"},
};

constexpr std::pair<CostModelKind, absl::string_view> kCostModelNames[] = {
    {CostModelKind::kDefault, "default"},
    {CostModelKind::kTarnawski, "tarnawski"},
    {CostModelKind::kPipeDream, "pipedream"},
};

absl::Status RejectBackwardOps(const Graph& g) {
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.is_backward(v)) {
      return absl::InvalidArgumentError(absl::StrCat("the latency objective scores inference graphs, but operator '",
                                                     g.name(v),
                                                     "' is a backward operator; use step_time for training"));
    }
  }
  return absl::OkStatus();
}

// THROUGHPUT memory: each device holds what its operators hold with the pipeline's micro-batches in flight
// (CostModel::pipelined_bytes); for an inference graph, as in Tarnawski et al., the parameters alone.
std::vector<int64_t> PipelinedBytesPerDevice(const CostModel& costs, const Placement& placement) {
  std::vector<int64_t> bytes(costs.topology().num_devices(), 0);
  for (OpId v = 0; v < costs.graph().num_ops(); ++v) bytes[placement.device[v]] += costs.pipelined_bytes(v);
  return bytes;
}

// Tarnawski's latency: the value, the blocks, and per device its compute (busy), its blocks' compute and
// transfers (load) and the parameter bytes it holds.
absl::Status ScoreTarnawski(const CostModel& costs, const Placement& placement, Evaluation& ev) {
  if (absl::Status s = ValidatePlacement(costs, placement); !s.ok()) return s;
  TarnawskiLatency model(costs);
  absl::StatusOr<double> latency = model.Score(placement.device, &ev.blocks);
  if (!latency.ok()) return latency.status();
  ev.value = *latency;
  const std::vector<int64_t> memory = PipelinedBytesPerDevice(costs, placement);
  ev.devices.resize(costs.topology().num_devices());
  for (OpId v = 0; v < costs.graph().num_ops(); ++v)
    ev.devices[placement.device[v]].busy += costs.op_time(v, placement.device[v]);
  for (DeviceId d = 0; d < costs.topology().num_devices(); ++d) {
    DeviceScore& s = ev.devices[d];
    s.load = model.is_accelerator(d) ? 0 : s.busy;
    s.peak_memory = memory[d];
    s.capacity = costs.topology().device(d).memory_bytes;
    s.oom = model.is_accelerator(d) && s.capacity > 0 && s.peak_memory > s.capacity;  // host memory is unlimited
  }
  for (const LatencyBlock& b : ev.blocks) ev.devices[b.device].load += b.compute + b.transfer;
  return absl::OkStatus();
}

}  // namespace

absl::string_view ObjectiveName(Objective o) {
  for (const auto& [objective, name] : kNames) {
    if (objective == o) return name;
  }
  return "unknown";
}

absl::StatusOr<Objective> ParseObjective(absl::string_view name) {
  for (const auto& [objective, n] : kNames) {
    if (n == name) return objective;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown objective '", name, "'; valid objectives are step_time, throughput, latency"));
}

absl::string_view CostModelName(CostModelKind k) {
  for (const auto& [kind, name] : kCostModelNames) {
    if (kind == k) return name;
  }
  return "unknown";
}

absl::StatusOr<CostModelKind> ParseCostModel(absl::string_view name) {
  if (name.empty()) return CostModelKind::kDefault;
  for (const auto& [kind, n] : kCostModelNames) {
    if (n == name) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown cost model '", name, "'; known cost models are default, tarnawski, pipedream"));
}

absl::Status CheckCostModel(CostModelKind cost_model, Objective objective) {
  if (cost_model == CostModelKind::kTarnawski && objective != Objective::kLatency) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tarnawski cost model scores the latency objective only, not ", ObjectiveName(objective)));
  }
  if (cost_model == CostModelKind::kPipeDream && objective != Objective::kThroughput) {
    return absl::InvalidArgumentError(
        absl::StrCat("the pipedream cost model scores the throughput objective only, not ", ObjectiveName(objective)));
  }
  return absl::OkStatus();
}

std::vector<double> DeviceLoads(const CostModel& costs, const Placement& placement) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_devices = topo.num_devices();
  const std::vector<DeviceId>& device = placement.device;
  std::vector<double> load(num_devices, 0);
  // Compute first, in OpId order: the lower bound's colocation-group sums rely on that order.
  for (OpId v = 0; v < g.num_ops(); ++v) load[device[v]] += costs.op_time(v, device[v]);

  std::vector<uint8_t> pays(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) pays[d] = topo.device(d).type != DeviceType::kCpu;
  // stamp[d] == t: tensor t has already been charged to receiver d.
  std::vector<TensorId> stamp(num_devices, kNone);
  for (OpId u = 0; u < g.num_ops(); ++u) {
    const DeviceId from = device[u];
    EdgeId e = g.out_begin(u);
    while (e < g.out_end(u)) {
      const int32_t output = g.edge(e).src_output;
      const TensorId t = g.first_output(u) + output;
      // The sender sends each tensor once, whoever reads it; where readers sit behind different paths it
      // pays the slowest of them.
      double send = -1;
      for (; e < g.out_end(u) && g.edge(e).src_output == output; ++e) {
        const DeviceId to = device[g.edge(e).dst];
        if (to == from || stamp[to] == t) continue;
        stamp[to] = t;
        const double time = costs.transfer_time(t, from, to);
        send = std::max(send, time);
        if (pays[to]) load[to] += time;
      }
      if (send >= 0 && pays[from]) load[from] += send;
    }
  }
  return load;
}

absl::StatusOr<Evaluation> Evaluate(const CostModel& costs, const Placement& placement, Objective objective,
                                    const SimulatorConfig& config, CostModelKind cost_model) {
  if (absl::Status s = CheckCostModel(cost_model, objective); !s.ok()) return s;
  if (cost_model == CostModelKind::kPipeDream) {
    return absl::UnimplementedError("the pipedream cost model scores a placement as a plan: use EvaluateUnder");
  }
  Evaluation ev;
  ev.objective = objective;
  ev.cost_model = cost_model;
  const Topology& topo = costs.topology();
  if (cost_model == CostModelKind::kTarnawski) {
    if (absl::Status s = RejectBackwardOps(costs.graph()); !s.ok()) return s;
    if (absl::Status s = ScoreTarnawski(costs, placement, ev); !s.ok()) return s;
  } else if (objective == Objective::kThroughput) {
    if (absl::Status s = ValidatePlacement(costs, placement); !s.ok()) return s;
    const std::vector<double> load = DeviceLoads(costs, placement);
    const std::vector<int64_t> memory = PipelinedBytesPerDevice(costs, placement);
    ev.devices.resize(topo.num_devices());
    for (OpId v = 0; v < costs.graph().num_ops(); ++v)
      ev.devices[placement.device[v]].busy += costs.op_time(v, placement.device[v]);
    for (DeviceId d = 0; d < topo.num_devices(); ++d) {
      DeviceScore& s = ev.devices[d];
      s.load = load[d];
      s.peak_memory = memory[d];
      s.capacity = topo.device(d).memory_bytes;
      s.oom = s.capacity > 0 && s.peak_memory > s.capacity;
      ev.value = std::max(ev.value, s.load);
    }
  } else {
    if (objective == Objective::kLatency) {
      if (absl::Status s = RejectBackwardOps(costs.graph()); !s.ok()) return s;
    }
    absl::StatusOr<SimulationResult> sim = Simulate(costs, placement, config);
    if (!sim.ok()) return sim.status();
    ev.simulation = *std::move(sim);
    ev.value = ev.simulation.makespan;
    for (const DeviceReport& r : ev.simulation.devices) {
      ev.devices.push_back(DeviceScore{r.busy, r.busy, r.peak_memory, r.capacity, r.oom});
    }
  }
  ev.fits_memory = std::none_of(ev.devices.begin(), ev.devices.end(), [](const DeviceScore& s) { return s.oom; });
  ev.bound = ComputeLowerBound(costs, objective, cost_model);
  ev.ratio = ev.bound.value > 0 ? ev.value / ev.bound.value : 1.0;
  return ev;
}

}  // namespace placement

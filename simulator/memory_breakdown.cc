#include "simulator/memory_breakdown.h"

#include <algorithm>

#include "graph/pipelined_memory.h"

namespace placement {
namespace {

// What autograd keeps from the forward for the backward, on the device of the operator that made it.
void AddKeptActivations(const Graph& g, const Placement& placement, std::vector<MemoryBreakdown>* out) {
  const std::vector<int64_t> kept = KeptForBackwardBytes(g);
  for (OpId u = 0; u < g.num_ops(); ++u) {
    const DeviceId d = placement.device[u];
    if (kept[u] > 0 && d < static_cast<DeviceId>(out->size())) (*out)[d].activations += kept[u];
  }
}

}  // namespace

std::vector<MemoryBreakdown> BreakDownMemory(const Graph& g, const Placement& placement, int32_t num_devices,
                                             const std::vector<int64_t>& peak_memory) {
  std::vector<MemoryBreakdown> out(num_devices);
  bool training = false;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (placement.device[u] >= num_devices) continue;  // a device the caller reports nothing for
    MemoryBreakdown& m = out[placement.device[u]];
    m.workspace = std::max(m.workspace, g.temp_bytes(u));
    if (!g.is_backward(u)) {
      m.parameters += g.param_bytes(u);
      continue;
    }
    training = true;
    m.optimizer += g.param_bytes(u);  // a training step's updates hold the optimizer's state as their parameters
    if (IsWeightGradientType(g.op_type(u))) {
      for (int32_t k = 0; k < g.num_outputs(u); ++k) m.gradients += g.tensor(g.first_output(u) + k).bytes;
    }
  }
  if (training) {
    AddKeptActivations(g, placement, &out);
    return out;
  }
  for (int32_t d = 0; d < num_devices && d < static_cast<int32_t>(peak_memory.size()); ++d) {
    out[d].activations = std::max<int64_t>(0, peak_memory[d] - out[d].parameters - out[d].workspace);
  }
  return out;
}

std::vector<MemoryBreakdown> BreakDownMemory(const Graph& g, const Placement& placement, const Evaluation& evaluation) {
  std::vector<int64_t> peaks;
  peaks.reserve(evaluation.devices.size());
  for (const DeviceScore& s : evaluation.devices) peaks.push_back(s.peak_memory);
  const int32_t num_devices = static_cast<int32_t>(evaluation.devices.size());
  std::vector<MemoryBreakdown> out = BreakDownMemory(g, placement, num_devices, peaks);
  if (evaluation.objective == Objective::kThroughput && evaluation.cost_model == CostModelKind::kDefault) {
    for (MemoryBreakdown& m : out) {
      m.activations *= num_devices;
      m.workspace = 0;  // the pipelined sum holds no operator's scratch (a maximum, not a sum)
    }
  }
  return out;
}

std::vector<MemoryBreakdown> BreakDownPlanMemory(const ParallelPlan& plan, const PlanEvaluation& evaluation,
                                                 int32_t num_devices) {
  std::vector<MemoryBreakdown> out(num_devices);
  for (int32_t s = 0; s < plan.num_stages() && s < static_cast<int32_t>(evaluation.stages.size()); ++s) {
    const StageScore& x = evaluation.stages[s];
    MemoryBreakdown m;
    m.parameters = x.weight_bytes * x.weight_versions;
    m.gradients = x.gradient_bytes;
    m.optimizer = x.optimizer_bytes;
    m.activations = x.stash_bytes * x.in_flight;
    m.workspace = x.working_bytes;
    for (DeviceId d : plan.stages[s].devices) out[d] = m;
  }
  return out;
}

}  // namespace placement

#include "simulator/memory_breakdown.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace placement {
namespace {

// Whether a forward operator's outputs are read by another forward operator: a graph output's are the model's
// answer, which the loss reads and the backward starts from, not something autograd keeps.
bool ReadInTheForward(const Graph& g, OpId u) {
  for (const Edge& e : g.out_edges(u)) {
    if (!g.is_backward(e.dst)) return true;
  }
  return false;
}

// The forward tensors a backward operator reads: kept by autograd from the forward pass until then.
void AddKeptActivations(const Graph& g, const Placement& placement, std::vector<MemoryBreakdown>* out) {
  std::vector<uint8_t> counted(g.num_tensors(), 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    if (g.is_backward(edge.src) || !g.is_backward(edge.dst) || !ReadInTheForward(g, edge.src)) continue;
    const TensorId t = g.edge_tensor(e);
    if (counted[t]) continue;
    counted[t] = 1;
    const DeviceId d = placement.device[edge.src];
    if (d < static_cast<DeviceId>(out->size())) (*out)[d].activations += g.tensor(t).bytes;
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
    if (absl::EndsWith(g.op_type(u), "WeightGrad")) {
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

std::vector<MemoryBreakdown> BreakDownMemory(const Graph& g, const Placement& placement,
                                             const std::vector<DeviceScore>& devices) {
  std::vector<int64_t> peaks;
  peaks.reserve(devices.size());
  for (const DeviceScore& s : devices) peaks.push_back(s.peak_memory);
  return BreakDownMemory(g, placement, static_cast<int32_t>(devices.size()), peaks);
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

#include "policy/parallel/plan_lattice.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/exact/pipeline_search.h"
#include "simulator/pipedream_model.h"

namespace placement::parallel {
namespace {

struct UnitBytes {
  std::vector<double> weight, optimizer, stash;
};

// Per lattice unit: forward parameter bytes, backward (optimizer state) ones, and the forward tensors its backward
// operators read (each once per unit). Floating units hold none of them.
UnitBytes BytesPerUnit(const Graph& g, const PipelineModel& m, double* working) {
  UnitBytes b;
  b.weight.assign(m.num_units, 0);
  b.optimizer.assign(m.num_units, 0);
  b.stash.assign(m.num_units, 0);
  std::vector<int32_t> counted(g.num_tensors(), -1);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    int64_t outputs = g.temp_bytes(op);
    for (TensorId t = g.first_output(op); t < g.first_output(op + 1); ++t) outputs += g.tensor(t).bytes;
    *working = std::max(*working, static_cast<double>(outputs));
    const int32_t u = m.unit_of_op[op];
    if (u < 0) continue;
    (g.is_backward(op) ? b.optimizer : b.weight)[u] += static_cast<double>(g.param_bytes(op));
    if (!g.is_backward(op)) continue;
    for (EdgeId e : g.in_edges(op)) {
      const TensorId t = g.edge_tensor(e);
      if (g.is_backward(g.edge(e).src) || counted[t] == u) continue;
      counted[t] = u;
      b.stash[u] += static_cast<double>(g.tensor(t).bytes);
    }
  }
  return b;
}

// Sums of per-unit figures over each ideal's units.
void SumOverIdeals(const IdealSet& ideals, const UnitBytes& units, PlanLattice& out) {
  const int64_t n = ideals.size();
  out.weight_bytes.assign(n, 0);
  out.optimizer_bytes.assign(n, 0);
  out.stash_bytes.assign(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t* bits = ideals.bits(i);
    for (int32_t w = 0; w < ideals.words(); ++w) {
      for (uint64_t x = bits[w]; x != 0; x &= x - 1) {
        const int32_t u = w * 64 + __builtin_ctzll(x);
        out.weight_bytes[i] += units.weight[u];
        out.optimizer_bytes[i] += units.optimizer[u];
        out.stash_bytes[i] += units.stash[u];
      }
    }
  }
}

// PipeDream's charge for the cut of every ideal: its units' operators before the cut.
std::vector<double> PipeDreamCuts(const Graph& g, const PipelineModel& m, const IdealSet& ideals) {
  const AntichainActivations activations(g);
  std::vector<double> out(ideals.size(), 0);
  std::vector<uint8_t> inside(g.num_ops(), 0);
  for (int64_t i = 0; i < ideals.size(); ++i) {
    for (OpId op = 0; op < g.num_ops(); ++op) inside[op] = m.unit_of_op[op] >= 0 && ideals.Has(i, m.unit_of_op[op]);
    out[i] = activations.CutBytes(inside);
  }
  return out;
}

}  // namespace

absl::StatusOr<PlanLattice> BuildPlanLattice(const CostModel& costs, PipelineModelOptions::Weight weight,
                                             const Budget& budget, const LatticeLimits& limits) {
  PipelineModelOptions options;
  options.weight = weight;
  options.merge_sized = false;  // parameter bytes decide all-reduces, not only memory: keep them where they are
  absl::StatusOr<PipelineModel> model = BuildPipelineModel(costs, options);
  if (!model.ok()) return model.status();
  if (model->accelerators.empty()) {
    return absl::UnimplementedError("the hybrid planner places stages on accelerators, and the cluster has none");
  }
  for (int32_t u = 0; u < model->num_units; ++u) {
    if (!model->acc_ok[u]) {
      return absl::UnimplementedError(absl::StrCat("the hybrid planner places stages on accelerators, but '",
                                                   model->group_names[u], "' runs only on CPUs"));
    }
  }
  PlanLattice out;
  out.model_ptr = std::make_unique<PipelineModel>(*std::move(model));
  const PipelineModel& m = *out.model_ptr;
  absl::StatusOr<IdealSet> all = IdealSet::Enumerate(m, limits.max_ideals, limits.max_bytes, budget);
  if (all.ok()) {
    out.ideals = *std::move(all);
    out.complete = true;
  } else if (absl::IsResourceExhausted(all.status())) {
    const std::vector<std::vector<int32_t>> orders = pipeline_internal::SeedOrders(m);
    out.ideals = IdealSet::Prefixes(m, orders);
    out.notes.push_back(absl::StrCat(all.status().message(), ": searched the splits of ", orders.size(),
                                     " topological orders instead"));
  } else {
    return all.status();
  }
  SumOverIdeals(out.ideals, BytesPerUnit(costs.graph(), m, &out.working_bytes), out);
  if (weight == PipelineModelOptions::Weight::kForwardBytes)
    out.pipedream_cut = PipeDreamCuts(costs.graph(), m, out.ideals);
  return out;
}

std::vector<int32_t> StagesOfOps(const PlanLattice& lattice, const std::vector<ReplicaStep>& chain) {
  std::vector<int32_t> stage_of_unit(lattice.model().num_units, 0);
  for (size_t s = 0; s < chain.size(); ++s) {
    for (int32_t u = 0; u < lattice.model().num_units; ++u) {
      if (lattice.ideals.Has(chain[s].to, u) && !lattice.ideals.Has(chain[s].from, u))
        stage_of_unit[u] = static_cast<int32_t>(s);
    }
  }
  return StepOfOps(lattice.model(), stage_of_unit);
}

}  // namespace placement::parallel

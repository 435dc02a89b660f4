#include "server/answer.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/module_map.h"
#include "graph/placement_json.h"
#include "server/request_decoder.h"
#include "simulator/collectives.h"
#include "simulator/memory_breakdown.h"

namespace placement::server {
namespace pb = ::placement::v1;

std::vector<MemoryBreakdown> AnswerMemory(const PlacerResult& result, const Graph& graph, const Topology& topology) {
  if (result.plan.has_value())
    return BreakDownPlanMemory(result.plan->plan, result.plan->evaluation, topology.num_devices());
  return BreakDownMemory(graph, result.placement, result.evaluation);
}

void FillScore(const Evaluation& e, const Graph& graph, const Placement& placement, const Topology& topology,
               absl::string_view time_unit, pb::Score* score) {
  FillScore(e, BreakDownMemory(graph, placement, e), topology, time_unit, score);
}

void FillScore(const Evaluation& e, const std::vector<MemoryBreakdown>& breakdown, const Topology& topology,
               absl::string_view time_unit, pb::Score* score) {
  score->set_objective(ObjectiveToProto(e.objective));
  score->set_value(e.value);
  score->set_lower_bound(e.bound.value);
  score->set_ratio(e.ratio);
  score->set_fits_memory(e.fits_memory);
  score->set_time_unit(std::string(time_unit));
  score->set_critical_path(e.bound.critical_path);
  score->set_work_per_device(e.bound.work_per_device);
  score->set_largest_unit(e.bound.largest_unit);
  score->set_min_devices_for_memory(e.bound.min_devices_for_memory);
  score->mutable_devices()->Reserve(static_cast<int>(e.devices.size()));
  for (size_t d = 0; d < e.devices.size(); ++d) {
    const DeviceScore& in = e.devices[d];
    pb::DeviceScore* out = score->add_devices();
    out->set_device(topology.device(static_cast<DeviceId>(d)).name);
    out->set_busy_seconds(in.busy);
    out->set_load_seconds(in.load);
    out->set_peak_memory_bytes(in.peak_memory);
    out->set_capacity_bytes(in.capacity);
    out->set_out_of_memory(in.oom);
    out->set_utilization(e.value > 0 ? in.busy / e.value : 0);
    pb::MemoryBreakdown* memory = out->mutable_memory();
    memory->set_parameters_bytes(breakdown[d].parameters);
    memory->set_gradients_bytes(breakdown[d].gradients);
    memory->set_optimizer_bytes(breakdown[d].optimizer);
    memory->set_activations_bytes(breakdown[d].activations);
    memory->set_workspace_bytes(breakdown[d].workspace);
  }
}

pb::PlaceResponse AnswerFromResult(const PlacerResult& result, const Graph& graph, const Topology& topology,
                                   absl::string_view time_unit) {
  pb::PlaceResponse out;
  out.mutable_assignment()->Reserve(graph.num_ops());
  for (OpId u = 0; u < graph.num_ops(); ++u) {
    pb::Assignment* a = out.add_assignment();
    a->set_op(std::string(graph.name(u)));
    a->set_device(topology.device(result.placement.device[u]).name);
  }
  FillScore(result.evaluation, AnswerMemory(result, graph, topology), topology, time_unit, out.mutable_score());
  out.set_algorithm(result.algorithm);
  out.set_proven_optimal(result.proven_optimal);
  out.set_best_bound(result.best_bound);
  for (const std::string& n : result.notes) out.add_notes(n);
  out.set_num_operators(graph.num_ops());
  out.set_num_devices(topology.num_devices());
  FillModules(graph, result.placement, topology, out.mutable_modules());
  if (result.plan.has_value()) FillPlan(*result.plan, graph, topology, &out);
  return out;
}

void FillModules(const Graph& graph, const Placement& placement, const Topology& topology,
                 google::protobuf::RepeatedPtrField<pb::ModulePlacement>* modules) {
  for (ModuleDevice& m : ModuleDeviceMap(graph, placement, topology)) {
    pb::ModulePlacement* out = modules->Add();
    out->set_module(std::move(m.module));
    out->set_device(std::move(m.device));
  }
}

void FillPlan(const PlanAnswer& answer, const Graph& graph, const Topology& topology, pb::PlaceResponse* out) {
  const ParallelPlan& plan = answer.plan;
  const PlanEvaluation& ev = answer.evaluation;
  std::vector<pb::Stage*> stages;
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    pb::Stage* stage = out->add_stages();
    for (DeviceId d : plan.stages[s].devices) stage->add_devices(topology.device(d).name);
    const StageScore& x = ev.stages[s];
    stage->set_compute_seconds(x.forward + x.backward);
    stage->set_allreduce_seconds(x.allreduce);
    stage->set_allreduce(std::string(AllReduceName(x.allreduce_kind)));
    stage->set_period_seconds(x.period);
    stage->set_memory_bytes(x.memory_bytes);
    stage->set_in_flight(x.in_flight);
    stage->set_weight_versions(x.weight_versions);
    stages.push_back(stage);
  }
  for (OpId op : graph.topo_order()) stages[plan.stage_of_op[op]]->add_operators(std::string(graph.name(op)));
  std::vector<std::vector<std::string>> modules = StageModules(graph, plan.stage_of_op, plan.num_stages());
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    for (std::string& m : modules[s]) stages[s]->add_modules(std::move(m));
  }
  out->set_step_time(ev.step_time);
  out->set_schedule(std::string(ScheduleName(plan.schedule)));
  out->set_sharding(std::string(ShardingName(plan.sharding)));
  out->set_recompute(std::string(RecomputeName(plan.recompute)));
  out->set_global_batch(plan.global_batch);
  out->set_cost_model(std::string(CostModelName(ev.cost_model)));
  out->set_simulated_value(answer.simulated_time_per_sample > 0 ? answer.simulated_time_per_sample : 0);
  out->set_bottleneck(ev.bottleneck);
}

absl::Status DoesNotFit(const PlacerResult& result, const Topology& topology) {
  int64_t worst_short = -1;
  DeviceId worst = kNone;
  for (size_t d = 0; d < result.evaluation.devices.size(); ++d) {
    const DeviceScore& s = result.evaluation.devices[d];
    if (s.oom && s.peak_memory - s.capacity > worst_short) {
      worst_short = s.peak_memory - s.capacity;
      worst = static_cast<DeviceId>(d);
    }
  }
  if (worst == kNone) {
    return absl::FailedPreconditionError(absl::StrCat(result.algorithm, " found no placement that fits memory"));
  }
  const DeviceScore& s = result.evaluation.devices[worst];
  return absl::FailedPreconditionError(absl::StrCat(
      "the placement does not fit memory: ", result.algorithm, "'s best answer needs ", s.peak_memory, " bytes on ",
      topology.device(worst).name, ", which has ", s.capacity, " (", worst_short, " bytes short)"));
}

absl::StatusOr<Placement> PlacementFromRequest(const pb::SimulateRequest& request, const Graph& graph,
                                               const Topology& topology) {
  if (request.assignment_size() == 0) {
    if (request.placement_json().empty()) {
      return absl::InvalidArgumentError("no placement: set assignment (every operator once) or placement_json");
    }
    // Our placement file or a Tarnawski split: ParsePlacementJson tells them apart.
    absl::StatusOr<Placement> p = ParsePlacementJson(request.placement_json(), graph, topology);
    if (!p.ok()) return absl::Status(p.status().code(), absl::StrCat("placement_json: ", p.status().message()));
    return p;
  }
  Placement placement;
  placement.device.assign(graph.num_ops(), kNone);
  for (int i = 0; i < request.assignment_size(); ++i) {
    const pb::Assignment& a = request.assignment(i);
    const OpId op = graph.FindOp(a.op());
    if (op == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("assignment[", i, "]: no operator named '", a.op(), "'"));
    }
    const DeviceId d = topology.FindDevice(a.device());
    if (d == kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("assignment[", i, "] ('", a.op(), "'): no device named '", a.device(), "' in the topology"));
    }
    if (placement.device[op] != kNone) {
      return absl::InvalidArgumentError(absl::StrCat("assignment[", i, "]: operator '", a.op(), "' is assigned twice"));
    }
    placement.device[op] = d;
  }
  for (OpId u = 0; u < graph.num_ops(); ++u) {
    if (placement.device[u] == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("assignment: operator '", graph.name(u), "' has no device (",
                                                     graph.num_ops() - request.assignment_size(), " unassigned)"));
    }
  }
  return placement;
}

}  // namespace placement::server

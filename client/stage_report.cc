#include "client/stage_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/module_map.h"
#include "graph/units.h"
#include "simulator/collectives.h"

namespace placement::cli {
namespace {

std::string Time(double t, const std::string& unit) {
  return unit == "s" ? FormatSeconds(t) : absl::StrFormat("%.4g", t);
}

// "gpu0 .. gpu5" for a group, or its one device; "conv1 .. layer2.1" for a stage's modules.
std::string FirstToLast(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  return names.size() == 1 ? names.front() : absl::StrCat(names.front(), " .. ", names.back());
}

}  // namespace

PlanSummary SummarizePlan(const PlanAnswer& answer, const Graph& graph, const Topology& topology) {
  PlanSummary out;
  const ParallelPlan& plan = answer.plan;
  const PlanEvaluation& ev = answer.evaluation;
  out.schedule = std::string(ScheduleName(plan.schedule));
  out.sharding = std::string(ShardingName(plan.sharding));
  out.recompute = std::string(RecomputeName(plan.recompute));
  out.global_batch = plan.global_batch;
  out.cost_model = std::string(CostModelName(ev.cost_model));
  out.step_time = ev.step_time;
  out.simulated_value = answer.simulated_time_per_sample > 0 ? answer.simulated_time_per_sample : 0;
  out.bottleneck = ev.bottleneck;
  out.device_memory = BreakDownPlanMemory(plan, ev, topology.num_devices());
  out.stages.resize(plan.num_stages());
  for (OpId op : graph.topo_order()) out.stages[plan.stage_of_op[op]].operators.emplace_back(graph.name(op));
  std::vector<std::vector<std::string>> modules = StageModules(graph, plan.stage_of_op, plan.num_stages());
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    StageRow& row = out.stages[s];
    for (DeviceId d : plan.stages[s].devices) row.devices.push_back(topology.device(d).name);
    row.modules = std::move(modules[s]);
    const StageScore& x = ev.stages[s];
    row.compute = x.forward + x.backward;
    row.allreduce = x.allreduce;
    row.allreduce_kind = std::string(AllReduceName(x.allreduce_kind));
    row.period = x.period;
    row.memory = x.memory_bytes;
    row.in_flight = x.in_flight;
    row.weight_versions = x.weight_versions;
  }
  return out;
}

std::string PlanTable(const PlanSummary& plan, const std::string& unit) {
  std::string batch;
  if (plan.global_batch > 0) {
    batch = absl::StrCat(", global batch ", plan.global_batch * plan.micro_batch_size, " samples (",
                         plan.global_batch, " micro-batches of ", plan.micro_batch_size, ")");
  }
  std::string out = absl::StrCat("plan         ", plan.stages.size(), plan.stages.size() == 1 ? " stage" : " stages",
                                 ", ", plan.schedule, " schedule",
                                 plan.sharding == "none" ? "" : absl::StrCat(", ", plan.sharding, " sharding"),
                                 plan.recompute == "none" ? "" : absl::StrCat(", ", plan.recompute, " recompute"), ", ",
                                 plan.cost_model, " cost model", batch, "\n");
  if (plan.step_time > 0) {
    absl::StrAppend(&out, "step         ", Time(plan.step_time, unit),
                    unit == "s" ? absl::StrFormat(" (%.4g samples/s)", SamplesPerSecond(plan)) : "", "\n");
  }
  if (!plan.bottleneck.empty()) absl::StrAppend(&out, "bottleneck   ", plan.bottleneck, "\n");
  if (plan.simulated_value > 0)
    absl::StrAppend(&out, "simulated    ", Time(plan.simulated_value, unit),
                    plan.micro_batch_size > 1 ? absl::StrCat(" per micro-batch of ", plan.micro_batch_size, " samples")
                                              : std::string(" per micro-batch"),
                    "\n");
  // The stage boundaries in the model's own terms, where the graph has module scopes.
  bool has_modules = false;
  for (const StageRow& r : plan.stages) has_modules = has_modules || !r.modules.empty();
  absl::StrAppend(&out,
                  absl::StrFormat("\n%-6s %8s %-30s %6s %11s %11s %11s %11s %9s", "stage", "replicas", "devices", "ops",
                                  "compute", "allreduce", "period", "mem/device", "in flight"),
                  has_modules ? "  modules\n" : "\n");
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const StageRow& r = plan.stages[s];
    absl::StrAppend(&out,
                    absl::StrFormat("%-6d %8d %-30s %6d %11s %11s %11s %11s %9d", s + 1, r.devices.size(),
                                    FirstToLast(r.devices), r.operators.size(), Time(r.compute, unit),
                                    r.allreduce > 0 ? absl::StrCat(Time(r.allreduce, unit)) : "-", Time(r.period, unit),
                                    FormatBytes(static_cast<double>(r.memory)), r.in_flight),
                    has_modules ? absl::StrCat("  ", FirstToLast(r.modules)) : "", "\n");
  }
  return out;
}

double SamplesPerSecond(const PlanSummary& plan) {
  return plan.step_time > 0 ? static_cast<double>(plan.global_batch * plan.micro_batch_size) / plan.step_time : 0;
}

void AddPlanJson(const PlanSummary& plan, nlohmann::ordered_json* out) {
  (*out)["schedule"] = plan.schedule;
  (*out)["sharding"] = plan.sharding;
  (*out)["recompute"] = plan.recompute;
  (*out)["global_batch"] = plan.global_batch * plan.micro_batch_size;
  (*out)["micro_batch_size"] = plan.micro_batch_size;
  (*out)["micro_batches"] = plan.global_batch;
  (*out)["samples_per_second"] = SamplesPerSecond(plan);
  (*out)["cost_model"] = plan.cost_model;
  (*out)["step_time"] = plan.step_time;
  (*out)["simulated_value"] = plan.simulated_value;
  (*out)["bottleneck"] = plan.bottleneck;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageRow& r : plan.stages) {
    stages.push_back({{"replicas", r.devices.size()},
                      {"devices", r.devices},
                      {"modules", r.modules},
                      {"operators", r.operators},
                      {"compute", r.compute},
                      {"allreduce", r.allreduce},
                      {"allreduce_kind", r.allreduce_kind},
                      {"period", r.period},
                      {"memory_per_device", r.memory},
                      {"in_flight", r.in_flight},
                      {"weight_versions", r.weight_versions}});
  }
  (*out)["stages"] = std::move(stages);
}

}  // namespace placement::cli

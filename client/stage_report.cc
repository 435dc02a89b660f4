#include "client/stage_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/units.h"
#include "simulator/collectives.h"

namespace placement::cli {
namespace {

std::string Time(double t, const std::string& unit) { return unit == "s" ? FormatSeconds(t) : absl::StrFormat("%.4g", t); }

// "gpu0 .. gpu5" for a group, or its one device.
std::string DeviceRange(const std::vector<std::string>& devices) {
  if (devices.empty()) return "";
  return devices.size() == 1 ? devices.front() : absl::StrCat(devices.front(), " .. ", devices.back());
}

}  // namespace

PlanSummary SummarizePlan(const PlanAnswer& answer, const Graph& graph, const Topology& topology) {
  PlanSummary out;
  const ParallelPlan& plan = answer.plan;
  const PlanEvaluation& ev = answer.evaluation;
  out.schedule = std::string(ScheduleName(plan.schedule));
  out.global_batch = plan.global_batch;
  out.cost_model = std::string(CostModelName(ev.cost_model));
  out.step_time = ev.step_time;
  out.simulated_value = answer.simulated_time_per_sample > 0 ? answer.simulated_time_per_sample : 0;
  out.bottleneck = ev.bottleneck;
  out.stages.resize(plan.num_stages());
  for (OpId op : graph.topo_order()) out.stages[plan.stage_of_op[op]].operators.emplace_back(graph.name(op));
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    StageRow& row = out.stages[s];
    for (DeviceId d : plan.stages[s].devices) row.devices.push_back(topology.device(d).name);
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
  std::string out = absl::StrCat("plan         ", plan.stages.size(), plan.stages.size() == 1 ? " stage" : " stages", ", ",
                                 plan.schedule, " schedule, ", plan.cost_model, " cost model",
                                 plan.global_batch > 0 ? absl::StrCat(", global batch ", plan.global_batch) : "", "\n");
  if (plan.step_time > 0) absl::StrAppend(&out, "step         ", Time(plan.step_time, unit), "\n");
  if (!plan.bottleneck.empty()) absl::StrAppend(&out, "bottleneck   ", plan.bottleneck, "\n");
  if (plan.simulated_value > 0) absl::StrAppend(&out, "simulated    ", Time(plan.simulated_value, unit), " per sample\n");
  absl::StrAppend(&out, absl::StrFormat("\n%-6s %8s %-30s %6s %11s %11s %11s %11s %9s\n", "stage", "replicas", "devices",
                                        "ops", "compute", "allreduce", "period", "mem/device", "in flight"));
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const StageRow& r = plan.stages[s];
    absl::StrAppend(&out, absl::StrFormat("%-6d %8d %-30s %6d %11s %11s %11s %11s %9d\n", s + 1, r.devices.size(),
                                          DeviceRange(r.devices), r.operators.size(), Time(r.compute, unit),
                                          r.allreduce > 0 ? absl::StrCat(Time(r.allreduce, unit)) : "-",
                                          Time(r.period, unit), FormatBytes(static_cast<double>(r.memory)), r.in_flight));
  }
  return out;
}

void AddPlanJson(const PlanSummary& plan, nlohmann::ordered_json* out) {
  (*out)["schedule"] = plan.schedule;
  (*out)["global_batch"] = plan.global_batch;
  (*out)["cost_model"] = plan.cost_model;
  (*out)["step_time"] = plan.step_time;
  (*out)["simulated_value"] = plan.simulated_value;
  (*out)["bottleneck"] = plan.bottleneck;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageRow& r : plan.stages) {
    stages.push_back({{"replicas", r.devices.size()},
                      {"devices", r.devices},
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

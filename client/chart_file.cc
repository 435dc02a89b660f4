#include "client/chart_file.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "graph/file_io.h"
#include "simulator/plan_simulation.h"

namespace placement::cli {

absl::Status CheckChartApplies(const std::string& chart_path, const std::string& cost_model) {
  if (chart_path.empty() || cost_model.empty() || cost_model == "default") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--chart draws the simulator's schedule, which --cost_model ",
                                                 cost_model, " does not score; leave out one of them"));
}

ChartOptions ChartFor(const std::string& graph_path, const std::string& algorithm, const std::string& time_unit,
                      Objective objective) {
  ChartOptions options;
  options.title = algorithm.empty() ? graph_path : absl::StrCat(graph_path, " (", algorithm, ")");
  options.time_unit = time_unit;
  options.objective = objective;
  return options;
}

absl::Status WriteScheduleChart(const std::string& path, const CostModel& costs, const Placement& placement,
                                SimulatorConfig config, const ChartOptions& options) {
  config.record_timeline = true;
  absl::StatusOr<SimulationResult> sim = Simulate(costs, placement, config);
  absl::StatusOr<std::string> html =
      sim.ok() ? RenderScheduleHtml(costs, placement, *sim, options) : absl::StatusOr<std::string>(sim.status());
  if (!html.ok()) return absl::Status(html.status().code(), absl::StrCat("--chart: ", html.status().message()));
  return WriteChartFile(path, *html);
}

absl::StatusOr<std::string> RenderPlanChartHtml(const CostModel& costs, ParallelPlan plan, ChartOptions options) {
  constexpr int64_t kMostMicroBatches = 64;
  int32_t cycle = 1;
  for (int32_t s = 0; s < plan.num_stages(); ++s) cycle = std::lcm(cycle, plan.replicas(s));
  PlanSimulationOptions o;
  o.micro_batches = std::max(4, std::min<int32_t>(cycle, kMostMicroBatches));
  const bool whole_step = plan.global_batch > 0 && plan.global_batch <= kMostMicroBatches;
  if (plan.global_batch > kMostMicroBatches) plan.global_batch = o.micro_batches;  // one short step
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(costs, plan, o);
  if (!sim.ok()) return sim.status();
  options.title = absl::StrCat(options.title, whole_step ? ", one step of " : ", ", (*sim)->micro_batches,
                               " micro-batches of the plan");
  options.objective = Objective::kStepTime;
  return RenderScheduleHtml(*(*sim)->costs, (*sim)->placement, (*sim)->result, options);
}

absl::Status WritePlanChart(const std::string& path, const CostModel& costs, const ParallelPlan& plan,
                            const ChartOptions& options) {
  absl::StatusOr<std::string> html = RenderPlanChartHtml(costs, plan, options);
  if (!html.ok()) return absl::Status(html.status().code(), absl::StrCat("--chart: ", html.status().message()));
  return WriteChartFile(path, *html);
}

absl::Status WriteChartFile(const std::string& path, const std::string& html) {
  if (absl::Status s = WriteWholeFile(path, html); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--chart: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace placement::cli

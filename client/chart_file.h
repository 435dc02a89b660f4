// --chart FILE on place, simulate and submit: the schedule chart of a placement (client/chart), written to a file.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "client/chart/schedule_chart.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/parallel_plan.h"
#include "simulator/simulator.h"

namespace placement::cli {

// Simulates `placement` with its timeline recorded (with `config`'s constants) and writes the HTML page to
// `path`. Errors start with "--chart: " (a simulation that fails, a file that cannot be written).
// The chart draws the simulator's schedule: it has nothing to show for another cost model. INVALID_ARGUMENT for
// --chart with a cost model other than our own ("" or "default").
absl::Status CheckChartApplies(const std::string& chart_path, const std::string& cost_model);

// The chart's title ("GRAPH (ALGORITHM)", or the graph alone), time unit and objective.
ChartOptions ChartFor(const std::string& graph_path, const std::string& algorithm, const std::string& time_unit,
                      Objective objective);

// Writes a rendered chart; errors start with "--chart: ".
absl::Status WriteChartFile(const std::string& path, const std::string& html);

absl::Status WriteScheduleChart(const std::string& path, const CostModel& costs, const Placement& placement,
                                SimulatorConfig config, const ChartOptions& options);

// A parallel plan's chart: its step simulated micro-batch by micro-batch (simulator/plan_simulation.h) on every
// replica and collective engine, so that the chart shows the step the answer reports; a plan without a step, or
// with more than 64 micro-batches in one, is drawn over a short run (the title says how many).
absl::StatusOr<std::string> RenderPlanChartHtml(const CostModel& costs, ParallelPlan plan, ChartOptions options);

absl::Status WritePlanChart(const std::string& path, const CostModel& costs, const ParallelPlan& plan,
                            const ChartOptions& options);

}  // namespace placement::cli

#include "client/chart_file.h"

#include "absl/strings/str_cat.h"
#include "graph/file_io.h"

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

absl::Status WriteChartFile(const std::string& path, const std::string& html) {
  if (absl::Status s = WriteWholeFile(path, html); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--chart: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace placement::cli

// A self-contained HTML page charting one simulated step: per device a row of operators coloured by type,
// lanes of the transfers it sends and its memory resident over time, the critical path outlined, a time axis,
// a legend, tooltips, and a summary (objective value, lower bound, ratio, per-device busy time and peak
// memory). Inline SVG and CSS only: no script, font, image or other file is referenced, so the page opens
// anywhere offline, and every name from the input is escaped. The same inputs give the same bytes.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/objectives.h"
#include "simulator/simulator.h"

namespace placement {

struct ChartOptions {
  std::string title = "Simulated step";
  // "s": times are seconds, written with units ("12.3 ms"); anything else (an input's own unit, "input")
  // writes plain numbers.
  std::string time_unit = "s";
  // Which objective the summary reports, with its lower bound and ratio; the chart is always the step.
  Objective objective = Objective::kStepTime;
  // Above this many operator and transfer bars, runs of short neighbours in a row are merged into one bar
  // (the legend says so), keeping a 100k-operator chart to a few megabytes.
  int64_t max_bars = 20000;
  int32_t width_px = 1400;  // of the timeline, labels included: 600 .. 20000
};

// `sim` must come from Simulate(costs, placement, config) with config.record_timeline set; its memory
// samples draw the memory lines. Fails (InvalidArgument) on options out of range, or a simulation that does
// not match the graph, topology and placement.
absl::StatusOr<std::string> RenderScheduleHtml(const CostModel& costs, const Placement& placement,
                                               const SimulationResult& sim, const ChartOptions& options);

}  // namespace placement

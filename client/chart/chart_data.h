// What the SVG timeline is drawn from: the simulation and its bars, grouped by device. Internal to the chart
// library; schedule_chart.cc fills it in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/chart/bars.h"
#include "graph/cost_model.h"
#include "simulator/simulator.h"

namespace placement::chart {

struct DeviceRows {
  Row ops;
  std::vector<Row> sends;  // lanes of the transfers this device sends
};

struct ChartData {
  const CostModel* costs = nullptr;
  const SimulationResult* sim = nullptr;
  std::string time_unit;  // "s", or the input's own unit
  double span = 0;        // seconds (or input units) the time axis covers, > 0
  int32_t width_px = 0;   // of the whole SVG
  std::vector<DeviceRows> devices;
  double merged_below_px = 0;  // the merge threshold, 0 when every entry has its own bar
  int64_t drawn_bars = 0;
};

// The chart's geometry, shared by the drawing and the legend.
inline constexpr int32_t kLabelWidth = 210;  // the device labels and row captions left of the plot
inline constexpr int32_t kRightMargin = 28;

inline double PlotWidth(const ChartData& data) { return data.width_px - kLabelWidth - kRightMargin; }

}  // namespace placement::chart

// The HTML page around the timeline: style sheet, summary, legend and per-device table. Internal to the
// chart library.
#pragma once

#include <string>

#include "client/chart/chart_data.h"
#include "client/chart/schedule_chart.h"
#include "graph/placement.h"

namespace placement::chart {

std::string RenderPage(const ChartData& data, const Placement& placement, const ChartOptions& options,
                       const std::string& timeline_svg);

}  // namespace placement::chart

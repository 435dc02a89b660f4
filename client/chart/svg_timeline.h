// The timeline as inline SVG: per device a row of operators, lanes of outgoing transfers and the memory
// resident, under a time axis. Internal to the chart library.
#pragma once

#include <string>

#include "client/chart/chart_data.h"

namespace placement::chart {

// Classes the page's style sheet and the tests rely on: "device" (one group per device), "op" and "xfer"
// (bars), "agg" (a merged bar), "crit" (on the critical path), "t<N>" (op type N's colour), "memory".
std::string DrawTimelineSvg(const ChartData& data);

}  // namespace placement::chart

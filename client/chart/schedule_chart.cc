#include "client/chart/schedule_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart/bars.h"
#include "client/chart/chart_data.h"
#include "client/chart/chart_page.h"
#include "client/chart/critical_path.h"
#include "client/chart/svg_timeline.h"

namespace placement {
namespace {

using chart::Bar;
using chart::ChartData;
using chart::Row;
using Kind = TimelineEntry::Kind;

// Transfers of one sender that overlap in time (to different receivers, over different links) get up to
// this many lanes; beyond that they overlap in the last free one.
constexpr int32_t kMaxSendLanes = 3;

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("schedule chart: ", what));
}

absl::Status CheckInputs(const CostModel& costs, const Placement& placement, const SimulationResult& sim,
                         const ChartOptions& options) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  if (options.max_bars < 1) return Invalid(absl::StrCat("max_bars must be at least 1 (got ", options.max_bars, ")"));
  if (options.width_px < 600 || options.width_px > 20000) {
    return Invalid(absl::StrCat("width_px must be 600 to 20000 (got ", options.width_px, ")"));
  }
  if (options.time_unit.empty()) return Invalid("time_unit is empty");
  if (static_cast<int32_t>(placement.device.size()) != g.num_ops()) {
    return Invalid(
        absl::StrCat("the placement assigns ", placement.device.size(), " operators, the graph has ", g.num_ops()));
  }
  for (DeviceId d : placement.device) {
    if (d < 0 || d >= topo.num_devices()) {
      return Invalid(absl::StrCat("the placement names device ", d, ", not in the topology"));
    }
  }
  if (static_cast<int32_t>(sim.devices.size()) != topo.num_devices()) {
    return Invalid(
        absl::StrCat("the simulation reports ", sim.devices.size(), " devices, the topology has ", topo.num_devices()));
  }
  if (!sim.memory.empty() && sim.memory.size() != sim.devices.size()) {
    return Invalid("the simulation's memory samples do not cover every device");
  }
  if (g.num_ops() > 0 && sim.timeline.empty()) {
    return Invalid("the simulation has no timeline; simulate with record_timeline");
  }
  const auto is_device = [&](DeviceId d) { return d >= 0 && d < topo.num_devices(); };
  for (const TimelineEntry& e : sim.timeline) {
    const bool op = e.kind == Kind::kOp;
    const bool known = op ? e.id >= 0 && e.id < g.num_ops() : e.id >= 0 && e.id < g.num_tensors() && is_device(e.peer);
    if (!std::isfinite(e.start) || !std::isfinite(e.end) || e.end < e.start || !is_device(e.device) || !known) {
      return Invalid("the simulation's timeline does not match the graph and topology");
    }
    if (op ? placement.device[e.id] != e.device : placement.device[g.tensor_producer(e.id)] != e.device) {
      return Invalid(absl::StrCat("the simulation ran '", g.name(op ? e.id : g.tensor_producer(e.id)),
                                  "' on another device than the placement puts it"));
    }
  }
  return absl::OkStatus();
}

void SortRow(Row& row) {
  std::sort(row.begin(), row.end(), [](const Bar& a, const Bar& b) {
    return std::tie(a.start, a.end, a.first) < std::tie(b.start, b.end, b.first);
  });
}

}  // namespace

absl::StatusOr<std::string> RenderScheduleHtml(const CostModel& costs, const Placement& placement,
                                               const SimulationResult& sim, const ChartOptions& options) {
  if (absl::Status s = CheckInputs(costs, placement, sim, options); !s.ok()) return s;
  absl::StatusOr<std::vector<uint8_t>> critical = chart::CriticalPath(costs.graph(), placement, sim.timeline);
  if (!critical.ok()) return Invalid(critical.status().message());

  const int32_t num_devices = costs.topology().num_devices();
  ChartData data;
  data.costs = &costs;
  data.sim = &sim;
  data.time_unit = options.time_unit;
  data.width_px = options.width_px;
  data.span = sim.makespan;
  for (const TimelineEntry& e : sim.timeline) data.span = std::max(data.span, e.end);
  if (!(data.span > 0)) data.span = 1;  // only instantaneous entries: any scale will do

  data.devices.resize(num_devices);
  std::vector<Row> sends(num_devices);
  for (int32_t i = 0; i < static_cast<int32_t>(sim.timeline.size()); ++i) {
    const TimelineEntry& e = sim.timeline[i];
    Row& row = e.kind == Kind::kOp ? data.devices[e.device].ops : sends[e.device];
    row.push_back(chart::SingleBar(i, e.start, e.end, (*critical)[i] != 0));
  }
  std::vector<Row*> rows;
  for (DeviceId d = 0; d < num_devices; ++d) {
    SortRow(data.devices[d].ops);
    SortRow(sends[d]);
    data.devices[d].sends = chart::PackLanes(sends[d], kMaxSendLanes);
    rows.push_back(&data.devices[d].ops);
    for (Row& lane : data.devices[d].sends) rows.push_back(&lane);
  }
  const double plot_px = chart::PlotWidth(data);
  data.merged_below_px = chart::MergeShortBars(rows, data.span / plot_px, plot_px, options.max_bars);
  data.drawn_bars = chart::CountBars(rows);

  return chart::RenderPage(data, placement, options, chart::DrawTimelineSvg(data));
}

}  // namespace placement

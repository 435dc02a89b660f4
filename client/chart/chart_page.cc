#include "client/chart/chart_page.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/chart/html_text.h"
#include "graph/units.h"
#include "simulator/objectives.h"

namespace placement::chart {
namespace {

using Kind = TimelineEntry::Kind;

// Op types listed in the legend; the rest are counted. Their colours are in the style sheet all the same.
constexpr size_t kLegendTypes = 24;

// The policy forbids fetching anything, so a page opened from an untrusted graph can run nothing even if a
// name slipped through unescaped.
constexpr absl::string_view kHead = R"(<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
)";

constexpr absl::string_view kStyle = R"(body { margin: 16px 20px; color: #1f2328; background: #fff;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 18px; margin: 0 0 6px; }
.stats { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0 0 10px; }
.stats b { font-weight: 600; }
.note { color: #57606a; margin: 4px 0; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 8px 0 10px; align-items: center; }
.key { display: inline-flex; align-items: center; gap: 5px; white-space: nowrap; }
.sw { display: inline-block; width: 14px; height: 10px; border-radius: 2px; }
.sw.crit { background: #fff; box-shadow: inset 0 0 0 2px #d7191c; }
.sw.xfer { background: #3a87b8; }
.sw.mem { background: rgba(123, 108, 206, .4); box-shadow: inset 0 -2px 0 #5b4bb0; }
.sw.cap { height: 0; border-top: 2px dashed #d7191c; border-radius: 0; }
.timeline { overflow-x: auto; }
svg.chart { display: block; }
svg.chart text { font: 11px system-ui, -apple-system, "Segoe UI", sans-serif; fill: #1f2328; }
svg.chart .dev { font-size: 12px; font-weight: 600; }
svg.chart .sub { font-size: 10.5px; fill: #57606a; }
svg.chart .sub.oom { fill: #d7191c; font-weight: 600; }
svg.chart .faint { font-size: 10px; fill: #8c959f; }
svg.chart .cap { font-size: 10px; fill: #8c959f; text-anchor: end; }
svg.chart .tick { font-size: 10.5px; fill: #57606a; text-anchor: middle; }
svg.chart .lbl { font-size: 10px; fill: #111; pointer-events: none; }
.grid { stroke: #e4e7eb; stroke-width: 1; }
.band { fill: #f8f9fa; }
.idle { fill: #eceff2; }
.op { stroke: #fff; stroke-width: .5; }
.op.agg { stroke: none; fill-opacity: .75; }
.xfer { fill: #3a87b8; }
.xfer.agg { fill-opacity: .7; }
rect.crit { stroke: #d7191c; stroke-width: 1.6; }
.mem { fill: rgba(123, 108, 206, .28); }
.memline { fill: none; stroke: #5b4bb0; stroke-width: 1.1; }
.membase { stroke: #c9ced4; stroke-width: 1; }
.capline { stroke: #d7191c; stroke-width: 1; stroke-dasharray: 4 3; }
table.devices { border-collapse: collapse; margin-top: 14px; }
table.devices th, table.devices td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #e4e7eb; }
table.devices th:first-child, table.devices td:first-child, table.devices td:nth-child(2) { text-align: left; }
td.oom { color: #d7191c; font-weight: 600; }
)";

std::string Count(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

struct TypeUse {
  int32_t type = 0;
  double time = 0;
  int64_t ops = 0;
};

// Op types in the order the legend lists them: most time first, then by name.
std::vector<TypeUse> TypesByTime(const Graph& g, const SimulationResult& sim) {
  std::vector<TypeUse> use(g.op_types().size());
  for (size_t t = 0; t < use.size(); ++t) use[t].type = static_cast<int32_t>(t);
  for (const TimelineEntry& e : sim.timeline) {
    if (e.kind != Kind::kOp) continue;
    TypeUse& u = use[g.op_type_id(e.id)];
    u.time += e.end - e.start;
    ++u.ops;
  }
  std::erase_if(use, [](const TypeUse& u) { return u.ops == 0; });
  std::sort(use.begin(), use.end(), [&](const TypeUse& a, const TypeUse& b) {
    if (a.time != b.time) return a.time > b.time;
    return g.op_types()[a.type] < g.op_types()[b.type];
  });
  return use;
}

class Page {
 public:
  Page(const ChartData& data, const Placement& placement, const ChartOptions& options)
      : d_(data), placement_(placement), options_(options), g_(data.costs->graph()), topo_(data.costs->topology()) {}

  std::string Render(const std::string& svg) {
    const std::vector<TypeUse> types = TypesByTime(g_, *d_.sim);
    std::vector<std::string> names;
    for (const TypeUse& u : types) names.push_back(g_.op_types()[u.type]);
    colours_ = TypeColours(names);
    absl::StrAppend(&out_, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n", kHead, "<title>",
                    EscapeHtml(options_.title), "</title>\n<style>\n", kStyle);
    // One class per op type in use, so a bar names its colour in a few bytes.
    for (size_t i = 0; i < types.size(); ++i) {
      absl::StrAppend(&out_, ".t", types[i].type, " { fill: ", colours_[i], "; }\n");
    }
    absl::StrAppend(&out_, "</style>\n</head>\n<body>\n<h1>", EscapeHtml(options_.title), "</h1>\n");
    Summary();
    Legend(types);
    absl::StrAppend(&out_, "<div class=\"timeline\">\n", svg, "</div>\n");
    DeviceTable();
    absl::StrAppend(&out_, "</body>\n</html>\n");
    return std::move(out_);
  }

 private:
  std::string Time(double t) const { return EscapeHtml(TimeText(t, d_.time_unit)); }

  void Stat(absl::string_view name, const std::string& value_html) {
    absl::StrAppend(&out_, "<span>", name, " <b>", value_html, "</b></span>");
  }

  void Summary() {
    const SimulationResult& sim = *d_.sim;
    double value = sim.makespan;
    if (options_.objective == Objective::kThroughput) {
      const std::vector<double> loads = DeviceLoads(*d_.costs, placement_);
      value = loads.empty() ? 0 : *std::max_element(loads.begin(), loads.end());
    }
    const LowerBound bound = ComputeLowerBound(*d_.costs, options_.objective);
    const double ratio = bound.value > 0 ? value / bound.value : 1.0;
    absl::StrAppend(&out_, "<div class=\"stats\">");
    Stat(EscapeHtml(ObjectiveName(options_.objective)), Time(value));
    Stat("lower bound", Time(bound.value));
    Stat("ratio", absl::StrFormat("%.3f", ratio));
    if (options_.objective == Objective::kThroughput) Stat("step time", Time(sim.makespan));
    Stat("operators", Count(g_.num_ops()));
    Stat("devices", Count(topo_.num_devices()));
    Stat("transfers", Count(sim.transfers));
    Stat("moved", EscapeHtml(FormatBytes(static_cast<double>(sim.bytes_moved))));
    Stat("memory", sim.fits_memory ? "fits" : "<span style=\"color:#d7191c\">out of memory</span>");
    absl::StrAppend(&out_, "</div>\n");
    if (d_.time_unit != "s") {
      absl::StrAppend(&out_, "<p class=\"note\">Times are in the input's own unit (", EscapeHtml(d_.time_unit),
                      ").</p>\n");
    }
  }

  void Legend(const std::vector<TypeUse>& types) {
    absl::StrAppend(&out_, "<div class=\"legend\">");
    for (size_t i = 0; i < types.size() && i < kLegendTypes; ++i) {
      const TypeUse& u = types[i];
      absl::StrAppend(&out_, "<span class=\"key\" title=\"", Count(u.ops), " operators, ", Time(u.time),
                      "\"><span class=\"sw\" style=\"background:", colours_[i], "\"></span>",
                      EscapeHtml(Ellipsize(g_.op_types()[u.type], 32)), "</span>");
    }
    if (types.size() > kLegendTypes) {
      absl::StrAppend(&out_, "<span class=\"key\">and ", types.size() - kLegendTypes, " more op types</span>");
    }
    absl::StrAppend(&out_,
                    "<span class=\"key\"><span class=\"sw crit\"></span>critical path</span>"
                    "<span class=\"key\"><span class=\"sw xfer\"></span>transfer sent (hover: to which device)</span>"
                    "<span class=\"key\"><span class=\"sw mem\"></span>memory resident</span>"
                    "<span class=\"key\"><span class=\"sw cap\"></span>capacity</span></div>\n");
    if (d_.merged_below_px > 0) {
      int64_t ops = 0, transfers = 0;
      for (const TimelineEntry& e : d_.sim->timeline) (e.kind == Kind::kOp ? ops : transfers) += 1;
      absl::StrAppend(&out_, "<p class=\"note\">Merged bars: ", Count(ops), " operators and ", Count(transfers),
                      " transfers are drawn as ", Count(d_.drawn_bars), " bars, to stay within ",
                      Count(options_.max_bars), ". Neighbours in a row narrower than ",
                      absl::StrCat(d_.merged_below_px),
                      " px each and less than that apart are drawn as one paler "
                      "bar in the colour of its longest member; its tooltip says how many it stands for.</p>\n");
    }
  }

  void DeviceTable() {
    std::vector<int64_t> ops_on(topo_.num_devices(), 0);
    for (DeviceId d : placement_.device) ++ops_on[d];
    absl::StrAppend(&out_,
                    "<table class=\"devices\">\n<tr><th>device</th><th>kind</th><th>ops</th><th>busy</th>"
                    "<th>busy share</th><th>peak memory</th><th>capacity</th></tr>\n");
    for (DeviceId d = 0; d < topo_.num_devices(); ++d) {
      const DeviceReport& r = d_.sim->devices[d];
      const double share = d_.sim->makespan > 0 ? 100 * r.busy / d_.sim->makespan : 0.0;
      absl::StrAppend(&out_, "<tr><td>", EscapeHtml(topo_.device(d).name), "</td><td>",
                      EscapeHtml(topo_.device(d).kind), "</td><td>", Count(ops_on[d]), "</td><td>", Time(r.busy),
                      "</td><td>", absl::StrFormat("%.1f%%", share), "</td><td", r.oom ? " class=\"oom\"" : "", ">",
                      EscapeHtml(FormatBytes(static_cast<double>(r.peak_memory))), r.oom ? " (OOM)" : "", "</td><td>",
                      r.capacity > 0 ? EscapeHtml(FormatBytes(static_cast<double>(r.capacity))) : "unlimited",
                      "</td></tr>\n");
    }
    absl::StrAppend(&out_, "</table>\n");
  }

  const ChartData& d_;
  const Placement& placement_;
  const ChartOptions& options_;
  const Graph& g_;
  const Topology& topo_;
  std::vector<std::string> colours_;  // of the types in the legend's order
  std::string out_;
};

}  // namespace

std::string RenderPage(const ChartData& data, const Placement& placement, const ChartOptions& options,
                       const std::string& timeline_svg) {
  return Page(data, placement, options).Render(timeline_svg);
}

}  // namespace placement::chart

#include "client/chart/svg_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/chart/html_text.h"
#include "graph/units.h"

namespace placement::chart {
namespace {

using Kind = TimelineEntry::Kind;

constexpr double kAxisHeight = 30;  // tick labels above the first device
constexpr double kOpRow = 24;
constexpr double kLane = 8;  // one lane of transfers: a 6 px bar and 2 px of air
constexpr double kMemory = 34;
constexpr double kPad = 5;
constexpr double kBlockGap = 16;
constexpr double kAverageCharPx = 6.1;  // of the 10 px label font, to decide how much of a name fits

double BlockHeight(const DeviceRows& rows) {
  const double lanes = static_cast<double>(std::max<size_t>(rows.sends.size(), 1));
  return kOpRow + kPad + lanes * kLane + kPad + kMemory;
}

// 1, 2 or 5 times a power of ten: about one tick per 110 px.
double TickStep(double span, double plot_px) {
  const double raw = span / std::max(1.0, std::floor(plot_px / 110));
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) return m * magnitude;
  }
  return 10 * magnitude;
}

class TimelineSvg {
 public:
  explicit TimelineSvg(const ChartData& data)
      : d_(data), g_(data.costs->graph()), topo_(data.costs->topology()), px_per_unit_(PlotWidth(data) / data.span) {
    MemoryScale();
  }

  std::string Draw() {
    double height = kAxisHeight;
    for (const DeviceRows& rows : d_.devices) height += BlockHeight(rows) + kBlockGap;
    height += kAxisHeight - kBlockGap / 2;
    absl::StrAppend(&out_, "<svg class=\"chart\" width=\"", d_.width_px, "\" height=\"", Px(height),
                    "\" viewBox=\"0 0 ", d_.width_px, " ", Px(height),
                    "\" role=\"img\" aria-label=\"schedule timeline\">\n");
    Axis(height);
    double y = kAxisHeight;
    for (DeviceId dev = 0; dev < topo_.num_devices(); ++dev) {
      Device(dev, y);
      y += BlockHeight(d_.devices[dev]) + kBlockGap;
    }
    absl::StrAppend(&out_, "</svg>\n");
    return std::move(out_);
  }

 private:
  double X(double t) const { return kLabelWidth + t * px_per_unit_; }
  std::string Time(double t) const { return TimeText(t, d_.time_unit); }

  // Ticks with grid lines through every row, labelled above the first device and below the last.
  void Axis(double height) {
    const double step = TickStep(d_.span, PlotWidth(d_));
    absl::StrAppend(&out_, "<g class=\"axis\">\n");
    for (int64_t k = 0; k * step <= d_.span * (1 + 1e-9); ++k) {
      const std::string x = Px(X(static_cast<double>(k) * step));
      const std::string label = EscapeHtml(Time(static_cast<double>(k) * step));
      absl::StrAppend(&out_, "<line class=\"grid\" x1=\"", x, "\" x2=\"", x, "\" y1=\"", Px(kAxisHeight - 6),
                      "\" y2=\"", Px(height - kAxisHeight + 6), "\"/>", "<text class=\"tick\" x=\"", x, "\" y=\"",
                      Px(kAxisHeight - 12), "\">", label, "</text><text class=\"tick\" x=\"", x, "\" y=\"",
                      Px(height - 8), "\">", label, "</text>\n");
    }
    absl::StrAppend(&out_, "</g>\n");
  }

  void Device(DeviceId dev, double y0) {
    const DeviceRows& rows = d_.devices[dev];
    const DeviceReport& report = d_.sim->devices[dev];
    const double block = BlockHeight(rows);
    const double lanes_top = y0 + kOpRow + kPad;
    const double memory_top = lanes_top + std::max<size_t>(rows.sends.size(), 1) * kLane + kPad;
    const std::string& name = topo_.device(dev).name;
    absl::StrAppend(&out_, "<g class=\"device\">\n<rect class=\"band\" x=\"0\" y=\"", Px(y0 - kBlockGap / 2 + 1),
                    "\" width=\"", d_.width_px, "\" height=\"", Px(block + kBlockGap - 2), "\"/>\n");
    // Labels: the name (cut to the column, whole in the tooltip), the kind and load, the memory peak.
    const double busy_share = d_.sim->makespan > 0 ? report.busy / d_.sim->makespan : 0;
    absl::StrAppend(&out_, "<text class=\"dev\" x=\"10\" y=\"", Px(y0 + 13), "\">", EscapeHtml(Ellipsize(name, 20)),
                    "<title>", EscapeHtml(name), "</title></text>\n<text class=\"sub\" x=\"10\" y=\"", Px(y0 + 27),
                    "\">", EscapeHtml(Ellipsize(topo_.device(dev).kind, 12)), " \xC2\xB7 busy ",
                    EscapeHtml(Time(report.busy)), absl::StrFormat(" (%.0f%%)", 100 * busy_share), "</text>\n");
    std::string memory_label = absl::StrCat("peak ", FormatBytes(static_cast<double>(report.peak_memory)));
    if (report.capacity > 0) absl::StrAppend(&memory_label, " / ", FormatBytes(static_cast<double>(report.capacity)));
    absl::StrAppend(&out_, "<text class=\"sub", report.oom ? " oom" : "", "\" x=\"10\" y=\"", Px(memory_top + 14),
                    "\">", EscapeHtml(memory_label), report.oom ? " OOM" : "",
                    "</text>\n<text class=\"faint\" x=\"10\" y=\"", Px(memory_top + 27), "\">axis ",
                    EscapeHtml(FormatBytes(memory_low_)), " \xE2\x80\x93 ", EscapeHtml(FormatBytes(memory_high_)),
                    "</text>\n");
    Caption("ops", y0 + kOpRow / 2);
    Caption("sends", lanes_top + std::max<size_t>(rows.sends.size(), 1) * kLane / 2);
    Caption("memory", memory_top + kMemory / 2);
    absl::StrAppend(&out_, "<rect class=\"idle\" x=\"", Px(X(0)), "\" y=\"", Px(y0), "\" width=\"", Px(PlotWidth(d_)),
                    "\" height=\"", Px(kOpRow), "\"/>\n");

    absl::StrAppend(&out_, "<g class=\"row ops\">\n");
    Bars(rows.ops, y0, kOpRow, /*critical=*/false);
    Bars(rows.ops, y0, kOpRow, /*critical=*/true);  // on top, so their outline is not covered by a neighbour
    absl::StrAppend(&out_, "</g>\n<g class=\"row sends\">\n");
    for (size_t lane = 0; lane < rows.sends.size(); ++lane) {
      Bars(rows.sends[lane], lanes_top + static_cast<double>(lane) * kLane, kLane - 2, false);
      Bars(rows.sends[lane], lanes_top + static_cast<double>(lane) * kLane, kLane - 2, true);
    }
    absl::StrAppend(&out_, "</g>\n");
    Memory(dev, memory_top);
    absl::StrAppend(&out_, "</g>\n");
  }

  void Caption(absl::string_view text, double y_middle) {
    absl::StrAppend(&out_, "<text class=\"cap\" x=\"", kLabelWidth - 6, "\" y=\"", Px(y_middle + 3.5), "\">", text,
                    "</text>\n");
  }

  void Bars(const Row& row, double y, double height, bool critical) {
    for (const Bar& b : row) {
      if (b.critical != critical) continue;
      const TimelineEntry& first = d_.sim->timeline[b.first];
      const bool is_op = first.kind == Kind::kOp;
      const double x = X(b.start);
      const double w = std::max(X(b.end) - x, 0.6);  // an instantaneous entry still shows
      std::string cls = is_op ? absl::StrCat("op t", g_.op_type_id(d_.sim->timeline[b.longest].id)) : "xfer";
      if (b.count > 1) absl::StrAppend(&cls, " agg");
      if (b.critical) absl::StrAppend(&cls, " crit");
      absl::StrAppend(&out_, "<rect class=\"", cls, "\" x=\"", Px(x), "\" y=\"", Px(y), "\" width=\"", Px(w),
                      "\" height=\"", Px(height), "\"><title>", Tooltip(b), "</title></rect>");
      if (is_op && w >= 36) {
        const auto chars = static_cast<int32_t>((w - 6) / kAverageCharPx);
        const std::string label = b.count > 1 ? absl::StrCat(b.count, " ops") : std::string(g_.name(first.id));
        if (chars >= 3) {
          absl::StrAppend(&out_, "<text class=\"lbl\" x=\"", Px(x + 3), "\" y=\"", Px(y + height / 2 + 3.5), "\">",
                          EscapeHtml(Ellipsize(label, chars)), "</text>");
        }
      }
      out_.push_back('\n');
    }
  }

  std::string EntryName(const TimelineEntry& e) const {
    if (e.kind == Kind::kOp) return std::string(g_.name(e.id));
    const OpId producer = g_.tensor_producer(e.id);
    const int32_t output = e.id - g_.first_output(producer);
    return absl::StrCat(g_.name(producer), output > 0 ? absl::StrCat(":", output) : "");
  }

  std::string Tooltip(const Bar& b) const {
    const TimelineEntry& e = d_.sim->timeline[b.first];
    const std::string when = absl::StrCat(Time(b.start), " \xE2\x86\x92 ", Time(b.end));
    std::string text;
    if (b.count > 1) {
      text = absl::StrCat(b.count, e.kind == Kind::kOp ? " operators" : " transfers", " merged, from ", EntryName(e),
                          " to ", EntryName(d_.sim->timeline[b.last]), "\n", when, ", busy ", Time(b.busy));
    } else if (e.kind == Kind::kOp) {
      text = absl::StrCat(g_.name(e.id), "\n", g_.op_type(e.id), " on ", topo_.device(e.device).name, "\n", when, " (",
                          Time(e.end - e.start), ")");
    } else {
      const std::string& to = topo_.device(e.peer).name;
      text = absl::StrCat(EntryName(e), " \xE2\x86\x92 ", to, "\n", topo_.device(e.device).name, " to ", to, ", ",
                          FormatBytes(static_cast<double>(g_.tensor(e.id).bytes)), "\n", when, " (",
                          Time(e.end - e.start), ")");
    }
    if (b.critical) absl::StrAppend(&text, "\non the critical path");
    return EscapeHtml(text);
  }

  // The bytes resident as a step line over a filled area. Samples closer than half a pixel share a column,
  // drawn as one vertical stroke from their lowest to their highest value, so a path has at most a few
  // commands per pixel however many samples the simulation recorded.
  void Memory(DeviceId dev, double top) {
    absl::StrAppend(&out_, "<g class=\"memory\">");
    const std::vector<MemorySample>* samples =
        d_.sim->memory.size() == d_.devices.size() ? &d_.sim->memory[dev] : nullptr;
    if (samples == nullptr || samples->empty()) {
      absl::StrAppend(&out_, "<text class=\"sub\" x=\"", Px(X(0) + 4), "\" y=\"", Px(top + kMemory / 2 + 3),
                      "\">not recorded</text></g>\n");
      return;
    }
    const double bottom = top + kMemory;
    const auto y = [&](int64_t bytes) {
      return Px(bottom - (static_cast<double>(bytes) - memory_low_) / (memory_high_ - memory_low_) * (kMemory - 3));
    };
    const auto column = [&](double t) { return std::round(X(t) * 2) / 2; };
    std::string line = absl::StrCat("M", Px(X(0)), " ", y(samples->front().bytes));
    double col = column(samples->front().time);
    int64_t lo = samples->front().bytes, hi = lo, last = lo;
    const auto flush = [&] {
      if (lo != hi) absl::StrAppend(&line, "V", y(hi), "V", y(lo));
      if (lo == hi || last != lo) absl::StrAppend(&line, "V", y(last));
    };
    for (size_t i = 1; i < samples->size(); ++i) {
      const MemorySample& s = (*samples)[i];
      if (const double c = column(s.time); c != col) {
        flush();
        col = c;
        lo = hi = last = s.bytes;
        absl::StrAppend(&line, "H", Px(c));
      } else {
        lo = std::min(lo, s.bytes);
        hi = std::max(hi, s.bytes);
        last = s.bytes;
      }
    }
    flush();
    absl::StrAppend(&line, "H", Px(X(d_.span)));
    absl::StrAppend(&out_, "<path class=\"mem\" d=\"", line, "V", Px(bottom), "H", Px(X(0)),
                    "Z\"/><path class=\"memline\" d=\"", line, "\"/>");
    const DeviceReport& report = d_.sim->devices[dev];
    if (report.capacity > 0 && static_cast<double>(report.capacity) <= memory_high_ &&
        static_cast<double>(report.capacity) >= memory_low_) {
      absl::StrAppend(&out_, "<line class=\"capline\" x1=\"", Px(X(0)), "\" x2=\"", Px(X(d_.span)), "\" y1=\"",
                      y(report.capacity), "\" y2=\"", y(report.capacity), "\"><title>capacity ",
                      EscapeHtml(FormatBytes(static_cast<double>(report.capacity))), "</title></line>");
    }
    absl::StrAppend(&out_, "<line class=\"membase\" x1=\"", Px(X(0)), "\" x2=\"", Px(X(d_.span)), "\" y1=\"",
                    Px(bottom), "\" y2=\"", Px(bottom), "\"/></g>\n");
  }

  // One memory axis for every device, so that their lines compare: from 0 to the highest peak, unless every
  // device always holds more than half of that (parameters dominate), when it starts at the lowest level
  // instead, or the lines would be flat.
  void MemoryScale() {
    memory_high_ = 1;
    for (const DeviceReport& r : d_.sim->devices) {
      memory_high_ = std::max(memory_high_, static_cast<double>(r.peak_memory));
    }
    double lowest = memory_high_;
    for (const std::vector<MemorySample>& samples : d_.sim->memory) {
      for (const MemorySample& m : samples) lowest = std::min(lowest, static_cast<double>(m.bytes));
    }
    memory_low_ = lowest > memory_high_ / 2 && lowest < memory_high_ ? lowest : 0;
  }

  const ChartData& d_;
  const Graph& g_;
  const Topology& topo_;
  const double px_per_unit_;
  double memory_low_ = 0;   // bytes at the bottom of every memory panel
  double memory_high_ = 1;  // ... and at the top
  std::string out_;
};

}  // namespace

std::string DrawTimelineSvg(const ChartData& data) { return TimelineSvg(data).Draw(); }

}  // namespace placement::chart

#include "client/chart/pipeline_chart.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/chart/html_text.h"
#include "graph/units.h"

namespace placement {
namespace {

using chart::EscapeHtml;
using chart::Px;

constexpr int32_t kLabel = 260, kRight = 28, kRow = 26, kTop = 24;
// Forward passes in blues, backward in oranges, alternating by chunk so interleaved chunks read apart.
constexpr const char* kForward[] = {"#4c78a8", "#72a0cf"};
constexpr const char* kBackward[] = {"#e4793a", "#f2a35e"};
constexpr const char* kMemoryColours[] = {"#4c78a8", "#e4793a", "#54a24b", "#b279a2", "#9d9d9d", "#eeca3b"};

struct Axis {
  double span = 1;   // seconds the plot covers
  double width = 1;  // pixels of the plot
  double X(double t) const { return kLabel + t / span * width; }
};

std::string PassRect(const PipelinePass& p, const Axis& axis, int32_t row) {
  const char* fill = (p.backward ? kBackward : kForward)[p.chunk % 2];
  const double x = axis.X(p.start), w = std::max(0.5, axis.X(p.end) - x);
  std::string out = absl::StrCat("<rect x=\"", Px(x), "\" y=\"", kTop + row * kRow + 3, "\" width=\"", Px(w),
                                 "\" height=\"", kRow - 6, "\" fill=\"", fill, "\"><title>",
                                 p.backward ? "backward" : "forward", " micro-batch ", p.micro_batch, ", chunk ",
                                 p.chunk, ": ", FormatSeconds(p.start), " to ", FormatSeconds(p.end),
                                 "</title></rect>");
  if (w >= 14) {
    absl::StrAppend(&out, "<text x=\"", Px(x + w / 2), "\" y=\"", kTop + row * kRow + kRow / 2 + 4,
                    "\" class=\"n\">", p.micro_batch, "</text>");
  }
  return out;
}

std::string TailRect(double start, double seconds, const char* fill, const char* what, const Axis& axis, int32_t row) {
  if (seconds <= 0) return "";
  const double x = axis.X(start), w = std::max(0.5, axis.X(start + seconds) - x);
  return absl::StrCat("<rect x=\"", Px(x), "\" y=\"", kTop + row * kRow + 3, "\" width=\"", Px(w), "\" height=\"",
                      kRow - 6, "\" fill=\"", fill, "\"><title>", what, ": ", FormatSeconds(seconds),
                      "</title></rect>");
}

std::string Timeline(const PipelineChartInput& in) {
  const PipelineTimeline& t = *in.timeline;
  const double tail = in.reduction_seconds + in.optimizer_seconds;
  const Axis axis{.span = std::max(1e-12, t.makespan + tail), .width = double(in.width_px - kLabel - kRight)};
  const int32_t rows = static_cast<int32_t>(in.stage_labels.size());
  std::string svg = absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", in.width_px, "\" height=\"",
                                 kTop + rows * kRow + 24, "\">");
  for (int32_t r = 0; r < rows; ++r) {
    absl::StrAppend(&svg, "<text x=\"4\" y=\"", kTop + r * kRow + kRow / 2 + 4, "\">",
                    EscapeHtml(chart::Ellipsize(in.stage_labels[r], 40)), "</text>");
    absl::StrAppend(&svg, TailRect(t.makespan, in.reduction_seconds, "#9d9d9d", "gradient reduction (exposed)", axis, r),
                    TailRect(t.makespan + in.reduction_seconds, in.optimizer_seconds, "#54a24b", "optimizer step",
                             axis, r));
  }
  for (const PipelinePass& p : t.passes) absl::StrAppend(&svg, PassRect(p, axis, p.device));
  const int32_t axis_y = kTop + rows * kRow + 16;
  for (int i = 0; i <= 4; ++i) {
    const double s = axis.span * i / 4;
    absl::StrAppend(&svg, "<text x=\"", Px(axis.X(s)), "\" y=\"", axis_y, "\" class=\"n\">", FormatSeconds(s),
                    "</text>");
  }
  return svg + "</svg>";
}

std::string MemoryBar(const PipelineChartInput& in) {
  double total = 0;
  for (const auto& [kind, bytes] : in.memory) total += bytes;
  const double scale = (in.width_px - kLabel - kRight) / std::max({total, in.memory_capacity, 1.0});
  std::string svg = absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", in.width_px,
                                 "\" height=\"64\"><text x=\"4\" y=\"22\">one GPU's memory</text>");
  double x = kLabel;
  for (size_t i = 0; i < in.memory.size(); ++i) {
    const auto& [kind, bytes] = in.memory[i];
    absl::StrAppend(&svg, "<rect x=\"", Px(x), "\" y=\"8\" width=\"", Px(bytes * scale), "\" height=\"20\" fill=\"",
                    kMemoryColours[i % 6], "\"><title>", EscapeHtml(kind), ": ", FormatBytes(bytes),
                    "</title></rect>");
    x += bytes * scale;
  }
  if (in.memory_capacity > 0) {
    const double cap = kLabel + in.memory_capacity * scale;
    absl::StrAppend(&svg, "<line x1=\"", Px(cap), "\" x2=\"", Px(cap), "\" y1=\"4\" y2=\"32\" stroke=\"#d62728\" "
                    "stroke-width=\"2\"><title>capacity ", FormatBytes(in.memory_capacity), "</title></line>");
  }
  std::string legend;
  for (size_t i = 0; i < in.memory.size(); ++i) {
    absl::StrAppend(&legend, "<tspan fill=\"", kMemoryColours[i % 6], "\">&#9632;</tspan> ",
                    EscapeHtml(in.memory[i].first), " ", FormatBytes(in.memory[i].second), "   ");
  }
  return absl::StrCat(svg, "<text x=\"", kLabel, "\" y=\"50\">", legend, "</text></svg>");
}

}  // namespace

absl::StatusOr<std::string> RenderPipelineChartHtml(const PipelineChartInput& in) {
  if (in.timeline == nullptr) return absl::InvalidArgumentError("a pipeline chart needs a timeline");
  if (in.width_px < 600 || in.width_px > 20000) {
    return absl::InvalidArgumentError(absl::StrCat("chart width ", in.width_px, " is outside 600..20000"));
  }
  int32_t stages = 0;
  for (const PipelinePass& p : in.timeline->passes) stages = std::max(stages, p.device + 1);
  if (stages != static_cast<int32_t>(in.stage_labels.size())) {
    return absl::InvalidArgumentError(absl::StrCat("the timeline has ", stages, " stages but ",
                                                   in.stage_labels.size(), " labels"));
  }
  std::string html = absl::StrCat(
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>", EscapeHtml(in.title),
      "</title><style>body{font:13px sans-serif;margin:16px}svg text{font:12px sans-serif}"
      "svg text.n{text-anchor:middle;font-size:10px}p{margin:2px 0}</style></head><body><h2>",
      EscapeHtml(in.title), "</h2>");
  for (const std::string& line : in.summary) absl::StrAppend(&html, "<p>", EscapeHtml(line), "</p>");
  absl::StrAppend(&html, "<p>One pipeline: forward passes in blue, backward in orange (recomputation and the "
                  "tensor-parallel collectives included; interleaved chunks alternate shades), then the exposed "
                  "gradient reduction (grey) and the optimizer step (green).</p>",
                  Timeline(in), MemoryBar(in), "</body></html>\n");
  return html;
}

}  // namespace placement

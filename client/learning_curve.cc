#include "client/learning_curve.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "graph/file_io.h"

namespace placement::cli {
namespace {

constexpr char kHeader[] = "phase\titeration\tseconds\tloss\tentropy\tsampled_ratio\tgreedy_validation_ratio";
// Chart geometry: width, height, and the left, right, top and bottom margins.
constexpr double W = 760, H = 360, L = 60, R = 190, T = 20, B = 40;

absl::StatusOr<CurveRow> ParseRow(absl::string_view line, int number) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
  CurveRow r;
  double iteration = 0;
  if (f.size() != 7 || !absl::SimpleAtod(f[1], &iteration) || !absl::SimpleAtod(f[2], &r.seconds) ||
      !absl::SimpleAtod(f[3], &r.loss) || !absl::SimpleAtod(f[4], &r.entropy) ||
      !absl::SimpleAtod(f[5], &r.sampled_ratio) || !absl::SimpleAtod(f[6], &r.validation_ratio)) {
    return absl::InvalidArgumentError(absl::StrCat("line ", number, " is not a curve row (", kHeader, ")"));
  }
  r.phase = std::string(f[0]);
  r.iteration = static_cast<int64_t>(iteration);
  return r;
}

// Maps data coordinates into the plot area.
struct Scale {
  double x0, x1, y0, y1;
  double X(double x) const { return L + (W - L - R) * (x - x0) / (x1 - x0 != 0 ? x1 - x0 : 1); }
  double Y(double y) const { return T + (H - T - B) * (1 - (y - y0) / (y1 - y0 != 0 ? y1 - y0 : 1)); }
};

void Axes(const Scale& s, std::string& out) {
  absl::StrAppendFormat(&out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, H - B, W - R,
                        H - B);
  absl::StrAppendFormat(&out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", L, T, L, H - B);
  for (int i = 0; i < 6; ++i) {
    const double y = s.y0 + (s.y1 - s.y0) * i / 5, x = s.x0 + (s.x1 - s.x0) * i / 5;
    absl::StrAppendFormat(&out, "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", L - 6, s.Y(y) + 4, y);
    absl::StrAppendFormat(&out, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, s.Y(y),
                          W - R, s.Y(y));
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%d</text>\n", s.X(x), H - B + 16,
                          static_cast<int64_t>(x));
  }
  absl::StrAppendFormat(&out, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">iteration</text>\n", (L + W - R) / 2,
                        H - 6);
  absl::StrAppendFormat(&out,
                        "<text x=\"14\" y=\"%g\" transform=\"rotate(-90 14 %g)\" text-anchor=\"middle\">step time / "
                        "lower bound (OOM +2)</text>\n",
                        (T + H - B) / 2, (T + H - B) / 2);
}

void Polyline(const Scale& s, const std::vector<std::pair<double, double>>& points, const char* color, double width,
              std::string& out) {
  std::string pts;
  for (const auto& [x, y] : points) absl::StrAppendFormat(&pts, "%s%.1f,%.1f", pts.empty() ? "" : " ", s.X(x), s.Y(y));
  absl::StrAppendFormat(&out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\" points=\"%s\"/>\n", color,
                        width, pts);
}

void Legend(const std::vector<std::pair<std::string, std::string>>& entries, std::string& out) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const double y = T + 10 + 16 * static_cast<double>(i);
    const bool dashed = entries[i].first.find("demonstrations") != std::string::npos;
    absl::StrAppendFormat(&out, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                          W - R + 10, y, W - R + 30, y, entries[i].second, dashed ? " stroke-dasharray=\"6,4\"" : "");
    absl::StrAppendFormat(&out, "<text x=\"%g\" y=\"%g\">%s</text>\n", W - R + 34, y + 4, entries[i].first);
  }
}

}  // namespace

std::string CurveTsv(const std::vector<CurveRow>& rows) {
  std::string out = absl::StrCat(kHeader, "\n");
  for (const CurveRow& r : rows) {
    absl::StrAppendFormat(&out, "%s\t%d\t%g\t%g\t%g\t%g\t%g\n", r.phase, r.iteration, r.seconds, r.loss, r.entropy,
                          r.sampled_ratio, r.validation_ratio);
  }
  return out;
}

absl::StatusOr<std::vector<CurveRow>> ParseCurveTsv(const std::string& text) {
  std::vector<CurveRow> rows;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (++number == 1 && absl::StartsWith(line, "phase\t")) continue;
    absl::StatusOr<CurveRow> row = ParseRow(line, number);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  return rows;
}

absl::StatusOr<std::string> CurveSvg(const std::vector<CurveRow>& all) {
  std::vector<CurveRow> rows;
  std::copy_if(all.begin(), all.end(), std::back_inserter(rows), [](const CurveRow& r) { return r.iteration > 0; });
  if (rows.empty()) return absl::InvalidArgumentError("the curve has no point past iteration 0");
  std::vector<std::pair<double, double>> validation, sampled;
  std::optional<double> demonstrations, boundary;
  Scale s{0, 0, 1.0, 0};
  for (const CurveRow& r : rows) {
    const double x = static_cast<double>(r.iteration);
    validation.push_back({x, r.validation_ratio});
    if (r.phase == "reinforce" && r.sampled_ratio > 0) sampled.push_back({x, r.sampled_ratio});
    if (r.phase == "imitation") {
      if (!demonstrations) demonstrations = r.sampled_ratio;
      boundary = std::max(boundary.value_or(x), x);
    }
    s.x1 = std::max(s.x1, x);
  }
  for (const auto* line : {&validation, &sampled}) {
    for (const auto& [x, y] : *line) s.y0 = std::min(s.y0, y), s.y1 = std::max(s.y1, y);
  }
  if (demonstrations) s.y0 = std::min(s.y0, *demonstrations), s.y1 = std::max(s.y1, *demonstrations);
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n"
      "<rect width=\"%g\" height=\"%g\" fill=\"white\"/>\n",
      W, H, W, H);
  Axes(s, out);
  if (boundary) {
    absl::StrAppendFormat(
        &out, "<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n",
        s.X(*boundary), T, s.X(*boundary), H - B);
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%g\">imitation | reinforcement</text>\n", s.X(*boundary) + 4,
                          T + 10);
  }
  std::vector<std::pair<std::string, std::string>> legend;
  if (!sampled.empty()) {
    Polyline(s, sampled, "#1f77b4", 1.2, out);
    legend.push_back({"sampled (training)", "#1f77b4"});
  }
  Polyline(s, validation, "#d62728", 1.5, out);
  legend.push_back({"greedy / scheduled (validation)", "#d62728"});
  if (demonstrations) {
    absl::StrAppendFormat(
        &out, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#2ca02c\" stroke-dasharray=\"6,4\"/>\n", L,
        s.Y(*demonstrations), W - R, s.Y(*demonstrations));
    legend.push_back({"demonstrations (training)", "#2ca02c"});
  }
  Legend(legend, out);
  return absl::StrCat(out, "</svg>\n");
}

absl::StatusOr<std::string> RunCurve(const std::string& tsv_path, const std::string& svg_path) {
  absl::StatusOr<std::string> text = ReadWholeFile(tsv_path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<CurveRow>> rows = ParseCurveTsv(*text);
  if (!rows.ok()) return absl::InvalidArgumentError(absl::StrCat(tsv_path, ": ", rows.status().message()));
  absl::StatusOr<std::string> svg = CurveSvg(*rows);
  if (!svg.ok()) return absl::InvalidArgumentError(absl::StrCat(tsv_path, ": ", svg.status().message()));
  if (absl::Status s = WriteWholeFile(svg_path, *svg); !s.ok()) return s;
  return absl::StrCat("wrote ", svg_path, " (", rows->size(), " points)\n");
}

}  // namespace placement::cli

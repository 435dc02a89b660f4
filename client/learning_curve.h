// The policy's learning curve as train_policy and `placectl train` write it (TSV: phase, iteration, seconds, loss,
// entropy, sampled_ratio, greedy_validation_ratio) and its chart (SVG, no plotting library): up to two phases on
// one x axis, imitation (when the run had one) and reinforcement. Red: the validation ratio the checkpoints are
// chosen on; blue: the placements sampled in reinforcement; dashed green: the demonstrations' own ratio.
// `placectl curve TSV SVG` draws a TSV written earlier.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace placement::cli {

struct CurveRow {
  std::string phase = "reinforce";  // "imitation" or "reinforce"
  int64_t iteration = 0;
  double seconds = 0;
  double loss = 0;
  double entropy = 0;
  double sampled_ratio = 0;
  double validation_ratio = 0;
};

std::string CurveTsv(const std::vector<CurveRow>& rows);
// INVALID_ARGUMENT naming the line that is not a row of the format.
absl::StatusOr<std::vector<CurveRow>> ParseCurveTsv(const std::string& text);
// INVALID_ARGUMENT when there is nothing to draw (no row past iteration 0).
absl::StatusOr<std::string> CurveSvg(const std::vector<CurveRow>& rows);

// Reads TSV_PATH and writes its chart to SVG_PATH.
absl::StatusOr<std::string> RunCurve(const std::string& tsv_path, const std::string& svg_path);

}  // namespace placement::cli

// The measurement files of graph/device_data/, compiled in: what scripts/measure_torch_device.py recorded on a GPU
// (its benchmark layers' times, peak, bandwidth and launch overhead), read by graph/measured_presets.h.
#pragma once

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace placement {

struct MeasuredTableText {
  absl::string_view name;  // the file's name without .json: "h100_float32", "h200_bfloat16"
  absl::string_view json;  // its text, as graph/calibration.h ParseMeasurements reads it
};

absl::Span<const MeasuredTableText> MeasuredTableTexts();

}  // namespace placement

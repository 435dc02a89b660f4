// A self-contained HTML page charting one pipeline of a layer-level training plan (a transformer's tp/pp/dp
// plan): a row per pipeline stage, labelled with its tensor-parallel group and data-parallel replicas, the
// forward and backward passes of every micro-batch as the schedule lays them out (interleaved chunks shaded
// apart), the exposed gradient reduction and the optimizer's step after them, and a bar of one GPU's memory by
// kind against its capacity. Inline SVG and CSS only; every name is escaped; the same input gives the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "simulator/pipeline_schedule.h"

namespace placement {

struct PipelineChartInput {
  std::string title;
  std::vector<std::string> summary;      // lines above the chart (model, cluster, plan, iteration, MFU)
  std::vector<std::string> stage_labels;  // one per stage, e.g. "stage 0: gpu0-7 (tp 8) x 4 replicas"
  const PipelineTimeline* timeline = nullptr;
  int32_t chunks = 1;                     // virtual stages per device
  double reduction_seconds = 0;           // the gradient reduction left exposed after the last backward
  double optimizer_seconds = 0;
  std::vector<std::pair<std::string, double>> memory;  // one GPU's bytes by kind
  double memory_capacity = 0;
  int32_t width_px = 1400;
};

// INVALID_ARGUMENT for a missing timeline, labels that do not match its stages, or a width outside 600..20000.
absl::StatusOr<std::string> RenderPipelineChartHtml(const PipelineChartInput& input);

}  // namespace placement

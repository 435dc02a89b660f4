// One pipeline's iteration as Megatron-LM orders it: 1F1B, interleaved over `virtual_stages` model chunks per
// device (each device's warm-up forwards, then one forward and one backward in turn, then the cool-down
// backwards), every pass waiting for its predecessor on the previous (forward) or next (backward) virtual stage and
// the send between them. The passes' start and end times are what a chart draws; the makespan checks the plan
// model's closed form (transformer_plan.h).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace placement {

struct PipelineStageTimes {
  double forward = 0;   // seconds of one micro-batch's forward over the device's layers (all its chunks)
  double backward = 0;  // the same for the backward, recomputation included
};

struct PipelinePass {
  int32_t device = 0;  // the pipeline stage (device group) that runs it
  int32_t chunk = 0;   // its model chunk on that device (0 .. virtual_stages - 1)
  int32_t micro_batch = 0;
  bool backward = false;
  double start = 0, end = 0;
};

struct PipelineTimeline {
  std::vector<PipelinePass> passes;  // by device, in the order each device runs them
  double makespan = 0;
};

// INVALID_ARGUMENT for no stages, fewer than one micro-batch or chunk, more than 4,000,000 passes, or an
// interleaved schedule whose micro-batches are not a multiple of the stages (Megatron-LM's condition).
absl::StatusOr<PipelineTimeline> SchedulePipeline(const std::vector<PipelineStageTimes>& stages,
                                                  int64_t micro_batches, int32_t virtual_stages, double send_seconds);

}  // namespace placement

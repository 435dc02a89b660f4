// A training step's global batch, in samples, split into micro-batches over a cluster's devices: what the default
// plan for a training step on several devices starts from, for placectl and the server alike.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/topology.h"

namespace placement {

// A sample is one run of the graph where the graph's batch is fixed.
struct BatchSplit {
  int64_t global_samples = 0;
  int64_t micro_batch = 1;  // samples per micro-batch: the batch the graph is bound to
  int64_t micro_batches = 0;
};

// How errors name the batch and the micro-batch: the words of the request (placectl's flags, the RPC's fields).
struct BatchWords {
  absl::string_view batch = "batch";
  absl::string_view micro_batch = "micro_batch";
};

// The split of `samples` over `devices`: the given micro-batch (INVALID_ARGUMENT unless it divides the samples,
// naming the largest divisor below it), or the largest divisor of the samples no larger than samples / devices
// (at least 1).
absl::StatusOr<BatchSplit> SplitGlobalBatch(int64_t samples, int64_t micro_batch, int32_t devices,
                                            const BatchWords& words = {});

// A graph whose batch is fixed (an ONNX model exported so) runs micro-batches of that batch: the global batch is a
// whole number of them (INVALID_ARGUMENT otherwise, naming one that is), and a micro-batch asked for must be it.
absl::StatusOr<BatchSplit> SplitFixedBatch(int64_t samples, int64_t micro_batch, int64_t fixed,
                                           const BatchWords& words = {});

// A training step's split: `samples` (0: one run of the graph per device) over `devices`, in runs of the graph's
// fixed batch where it has one (`fixed` > 0, SplitFixedBatch), else by SplitGlobalBatch.
absl::StatusOr<BatchSplit> SplitStepBatch(int64_t samples, int64_t micro_batch, int32_t devices, int64_t fixed,
                                          const BatchWords& words = {});

// The note of an answer for a graph whose batch is fixed (`fixed` > 0; "" otherwise): its micro-batches are runs of
// that batch, and a step of fewer of them than `devices` says what lets every device train.
std::string FixedBatchNote(const BatchSplit& split, int64_t fixed, int32_t devices, const BatchWords& words = {});

// The accelerators of the cluster, or all its devices where it has none.
int32_t Accelerators(const Topology& topology);

}  // namespace placement

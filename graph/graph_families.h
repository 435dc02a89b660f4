// Seeded synthetic graph families shaped like the networks placement is asked about, for scale tests and for
// training the learned policy on graphs it has not seen. Each is sized by an approximate operator count (10 to
// 100,000 and more) and a seed; the same family, size and seed give the same graph.
//
//   layered     random layered DAG with skip connections (LayeredRandomDag)
//   nas_cells   a stack of NAS-style cells: each block reads two earlier states of the cell, applies an
//               operation (convolutions, separable convolutions, pooling, identity) to each, and adds them
//   blocks      repeated Transformer blocks: layer norm, Q/K/V projections, attention, output projection,
//               residual, feed-forward, residual
//   fan_out     one source feeding many parallel branches that a concatenation joins (wide layers, experts)
//   chain       a long chain of operators (RNN unrolled in time, pipeline-friendly)
//   branches    multi-branch residual blocks (ResNeXt, Inception-ResNet): one to four parallel branches of
//               dense or convolutional layers, summed or concatenated and projected, added to the stream
//   unet        an encoder-decoder (U-Net) whose long skips join each level down to the same level up
//
// Operators carry roofline costs (FLOPs, bytes touched), output bytes and parameter bytes in the proportions of
// the layers they imitate, with seeded jitter so that no two graphs of a family are alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

struct FamilyOptions {
  int32_t approx_ops = 1000;  // the graph has about this many operators (within a block or cell)
  uint64_t seed = 1;
  int64_t batch = 32;   // scales activations and FLOPs
  int64_t width = 512;  // hidden size, channels
};

// The family names above, in a fixed order.
const std::vector<std::string>& GraphFamilies();

// Fails naming the family when it is unknown, or the option when it is out of range.
absl::StatusOr<Graph> GenerateFamily(absl::string_view family, const FamilyOptions& options);

}  // namespace placement

// The kernels eager PyTorch runs for the patterns an export spells out in several operators
// (graph/fused_patterns.h): GELU written as Div, Erf, Add, Mul, Mul is one GELU kernel in the model that was
// exported, which reads its input once and writes its output once. Priced as that kernel, two exports of one model
// (one with the fused ONNX operator, one spelled out) cost the same.
#pragma once

#include <vector>

#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/topology.h"

namespace placement {

// Reprices, in `time` (device kinds x operators, as CostModel keeps it; `kind_device`: a device of each kind), the
// operators of every fused pattern without measured times: the pattern's last operator takes the fused kernel (its
// class's roofline over the pattern's input, output and weights, one launch), the others nothing; in a training
// step the same for their gradients (the last one's "/grad" the fused backward, at the share of the forward the
// step gave it).
void PriceFusedPatterns(const Graph& g, const Topology& topology, absl::Span<const DeviceId> kind_device,
                        std::vector<double>& time);

}  // namespace placement

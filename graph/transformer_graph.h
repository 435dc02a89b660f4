// A transformer described by its config (graph/transformer_spec.h) expanded into the operator graph of one
// forward pass at a batch and sequence length: one operator per kernel eager PyTorch runs for it (embedding
// gathers; per layer the norms, the Q/K/V projections, the attention scores, softmax and context products, the
// output projection, the residual additions, the MLP or the router and experts; the final norm and the output
// layer), with the FLOPs, bytes and float32 weights the ONNX importer would give the same operators of an fp32
// export, and op names that carry the model's module paths ("/model/layers.3/self_attn/q_proj/MatMul").
//
// Attention is the unfused kernels (scores, softmax, context); causal masking is not subtracted from the FLOPs, as
// the kernels compute the whole square. Rotary embeddings, dropout, masks and layout copies are left out (small
// next to the products). A mixture-of-experts layer routes tokens x experts_per_token rows evenly over its experts.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/problem.h"
#include "graph/transformer_spec.h"

namespace placement {

// INVALID_ARGUMENT when batch or seq is not positive, seq exceeds the model's learned positions, or the graph
// would be too large (tensors past 2^62 bytes, more than two million operators).
absl::StatusOr<Problem> BuildTransformerGraph(const TransformerSpec& spec, int64_t batch, int64_t seq);

}  // namespace placement

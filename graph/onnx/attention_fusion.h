// Scaled-dot-product attention as eager PyTorch runs it.
//
// torch.nn.functional.scaled_dot_product_attention (what Hugging Face models and nn.MultiheadAttention call) is one
// kernel, flash or memory-efficient attention: it reads q, k and v, writes its output, keeps those and a
// log-sum-exp per query for its backward, and never holds the [batch, heads, queries, keys] scores. Both torch
// exporters spell it out as
//
//   MatMul(Mul(q, sqrt(scale)), Mul(k^T, sqrt(scale)))  ->  [Add or Where: the mask, up to two]  ->  Softmax
//     ->  [IsNaN and Where: rows the mask removed entirely]  ->  [Dropout]  ->  MatMul(., v)
//
// scaling both operands by the same square root. An attention written out in a model's own forward (Swin's with
// its position bias, T5's) scales q alone or the scores, and eager PyTorch runs it operator by operator as its
// export says; it is left as it is.
//
// Imported as written, the exported form would hold every head's scores and probabilities in the forward's live
// set and keep them for the backward (a tenth of BERT-base's training step at 128 tokens, most of a long-context
// decoder's), and price seven kernels where PyTorch runs one.
#pragma once

#include <cstdint>

#include <onnx/onnx_pb.h>

#include "graph/onnx/graph_index.h"
#include "graph/onnx/infer_shapes.h"

namespace placement::onnx_import {

// The operator type a recognized attention is imported as (domain kInternalDomain): inputs q, k^T, v and the
// masks, output the attention's, costs in kUnitCostAttribute.
inline constexpr char kAttentionOpType[] = "ScaledDotProductAttention";

// Replaces every such pattern of `graph` (nodes in a topological order, indexed by `index`, shapes inferred) by one
// operator in the place of its last MatMul, whose name, output and metadata it keeps; removes the pattern's other
// nodes and the constants only they read. Patterns whose shapes are not all known are left as they are. Returns how many were
// fused; the caller re-indexes the graph when any was.
int32_t FuseScaledDotProductAttention(onnx::GraphProto* graph, const GraphIndex& index, const InferredShapes& shapes);

}  // namespace placement::onnx_import

// FLOPs and bytes touched of one ONNX node from its input and output shapes: the table the roofline cost
// model feeds on. docs/onnx.md lists every formula; this header only says how to ask.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "absl/types/span.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

struct OpCost {
  double flops = 0;
  // Bytes read and written: inputs (weights included) plus outputs, except where the op touches less (a
  // Gather reads only the rows it picks, a Reshape or Shape only produces its output).
  double bytes_accessed = 0;
  // Multiply-accumulates of the matrix ops (Conv, ConvTranspose, Gemm, MatMul, Einsum, LSTM/GRU/RNN gate
  // products), reported so that they can be compared with published figures.
  double macs = 0;
  // A convolution's kernel window (kh x kw, from its weight's shape); 0 for other operators.
  int32_t window = 0;
  // The op type has no entry: FLOPs = output elements, bytes = inputs + outputs.
  bool is_default = false;
};

// Floats [FLOPs, bytes, MACs] on an operator that stands for a whole Loop or Scan body (control_flow.h).
inline constexpr char kUnitCostAttribute[] = "placement_unit_cost";

// `inputs` and `outputs` follow the node's slots; nullptr stands for an optional slot left empty.
OpCost ComputeOpCost(const onnx::NodeProto& node, absl::Span<const TensorInfo* const> inputs,
                     absl::Span<const TensorInfo* const> outputs);

}  // namespace placement::onnx_import

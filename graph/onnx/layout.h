// Which operators of an imported graph work on channels-last data, as eager PyTorch lays it out.
//
// A model that permutes its activations to NHWC for a LayerNorm or a Linear layer and back (ConvNeXt's blocks,
// exported as Transpose [0,2,3,1] ... Transpose [0,3,1,2]) hands its next layers an NCHW tensor whose memory is
// NHWC: PyTorch's permute is a view, and its elementwise operators and convolutions keep the layout of their
// input. A depthwise convolution then runs other kernels than on contiguous data (its CPU backward about twice
// as fast at ConvNeXt's larger sizes), so the cost model must know.
#pragma once

#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/onnx/infer_shapes.h"

namespace placement::onnx_import {

// For each node of `graph` (in its order, which ONNX requires topological), whether its 4-D outputs are
// channels-last: a Transpose with perm [0,3,1,2] makes them so; a convolution, a normalization over channels, a
// pooling and an elementwise operator keep the layout of a 4-D channels-last input; every other operator writes
// contiguous outputs.
std::vector<bool> ChannelsLastNodes(const onnx::GraphProto& graph, const InferredShapes& shapes);

}  // namespace placement::onnx_import

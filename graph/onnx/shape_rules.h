// Our own type and shape rules (newer_ops.h says when each applies), written from the operator specifications
// of ONNX opsets 18 to 21. Each fills every output's element type and dimensions, leaving a dimension without a
// value where it depends on the data, and returns an error naming what is wrong with the node otherwise.
#pragma once

#include "graph/onnx/newer_ops.h"

namespace placement::onnx_import {

absl::Status SameShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status BoolSameShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status BroadcastShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status CastShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status CastLikeShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status ConstantShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status ConstantOfShapeShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status QuantizeShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status DequantizeShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status ReduceShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status PadShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status SplitShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status ResizeShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status PoolShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status Col2ImShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status CenterCropPadShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status DeformConvShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status AffineGridShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status GridSampleShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status DftShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status ImageDecoderShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
absl::Status StringSplitShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);
// The importer's Stack: N inputs of one shape -> that shape with a new axis of N at `axis`.
absl::Status StackShape(const onnx::NodeProto&, absl::Span<const InputView>, std::vector<onnx::TypeProto>*);

}  // namespace placement::onnx_import

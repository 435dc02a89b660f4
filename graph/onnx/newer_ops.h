// Shape inference for the operators that changed or appeared after opset 17, the last one the linked ONNX
// library (Debian's 1.12) has schemas for, and for the importer's own operators. docs/onnx.md lists them.
//
// For a node of the default domain above opset 17 there are three cases: the operator is unchanged since 17
// (its opset-17 schema applies in full); it changed only in the types or attributes it accepts (Cast-19 takes
// float8, Q/DQ-21 block sizes: the opset-17 inference still gives the right shapes, but its checks would refuse
// the node, so they are skipped); or its shapes follow new rules (Reduce* and Pad take axes as an input, Split
// has num_outputs, new operators such as GroupNormalization or Col2Im): ours below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "graph/onnx/constant_folding.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

// The opset the linked library's schemas describe last.
inline constexpr int kLibraryOpset = 17;

// The importer's own operators (Stack: the per-iteration values of an unrolled Loop or Scan stacked along an
// axis), which expansion emits and nothing else may use.
inline constexpr char kInternalDomain[] = "placement.import";

struct Bounds;

struct InputView {
  const TensorInfo* info = nullptr;   // nullptr: the slot is empty
  const ConstValue* value = nullptr;  // the value when it is a known constant
  const Bounds* bounds = nullptr;     // else what the value is known to lie within (value_bounds.h), if anything
};

// Fills the element type and shape of each output; a dimension that depends on the data is left without a
// value. An error names what is wrong with the node.
using ShapeFn = absl::Status (*)(const onnx::NodeProto& node, absl::Span<const InputView> inputs,
                                 std::vector<onnx::TypeProto>* outputs);

struct NewerOpRule {
  ShapeFn own = nullptr;  // our inference; nullptr: the opset-17 schema's, without its checks
};

// How to infer `op` of the default domain at `opset` (> kLibraryOpset); nullopt when it is unchanged since 17.
std::optional<NewerOpRule> NewerOp(const std::string& op, int opset);

// Inference for an operator of kInternalDomain; nullptr for names it does not have.
ShapeFn InternalOp(const std::string& op);

}  // namespace placement::onnx_import

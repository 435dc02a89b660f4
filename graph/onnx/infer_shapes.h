// Static shapes for the tensors of an ONNX graph at a chosen batch size and sequence length, one node at a time.
//
// Symbolic dimensions of the graph inputs are bound first (docs/onnx.md gives the rules), then each node is
// inferred when everything it reads is known: with its schema's inference function, the way
// onnx::shape_inference does, or with ours for the operators that changed after the linked library's last
// opset (newer_ops.h). Three additions make exported real models come out fully static: small tensors are
// evaluated as they appear (constant_folding.h), so Reshape targets computed from Shape are known; sizes that
// depend on the data get a stated bound (data_dependent.h) or the user's value; and every failure is reported
// against the node that caused it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/constant_folding.h"
#include "graph/onnx/newer_ops.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tensor_info.h"
#include "graph/onnx/value_bounds.h"

namespace placement::onnx_import {

struct InferredShapes {
  // Every graph input, initializer and node output by name.
  std::unordered_map<std::string, TensorInfo> tensors;
  // Tensors whose values the import computed (constant_folding.h): shape arithmetic on static shapes and what
  // derives from constants alone. No runtime computes them per step.
  std::unordered_set<std::string> folded;
  std::vector<std::string> warnings;
  // No graph input has a batch axis to bind (every one fixed at export): the first input's first dimension, the
  // batch the model was exported at (1 for a scalar input); 0 when an input's batch axis was bound.
  int64_t fixed_batch = 0;
};

// `name` with every "/iterN/" of an unrolled Loop or Scan as "/iter*/": how one --dim names a tensor in every
// iteration, and how a warning repeated in each iteration is said once.
std::string EveryIteration(const std::string& name);
// Warnings that differ only in the iteration they are about, said once with "/iter*/" and the count.
std::vector<std::string> CollapseIterations(std::vector<std::string> warnings);

class ShapeInferer {
 public:
  ShapeInferer(const std::unordered_map<std::string, int>& opsets, const OnnxImportOptions& options,
               size_t expected_tensors);

  void AddInitializer(const onnx::TensorProto& init, const TensorInfo& info);
  absl::Status AddInput(const onnx::ValueInfoProto& input);
  // Declared types (value_info and graph outputs) fill in what a node's inference leaves unknown, e.g. the
  // outputs of an operator from a domain without a schema.
  void AddDeclared(const onnx::ValueInfoProto& info);

  // Infers the outputs of `node`, whose inputs must all be known. `index` names the node in messages when it
  // has no name. ONNX inference functions take the node by mutable reference; it is not changed.
  absl::Status InferNode(onnx::NodeProto& node, int32_t index);
  // Records outputs whose types the caller knows (a Loop kept as one operator): each is resolved as an
  // inferred output is.
  absl::Status SetOutputs(const onnx::NodeProto& node, int32_t index, std::vector<onnx::TypeProto> outputs);

  // What is known of a tensor, or nullptr.
  const TensorInfo* Info(const std::string& name) const;
  const ConstValue* Value(const std::string& name) const;
  void Warn(std::string warning) { result_.warnings.push_back(std::move(warning)); }

  // The shapes, with warnings for what was assumed (unresolved dimensions, --batch or --seq binding nothing).
  InferredShapes Finish() &&;

 private:
  void SetType(const std::string& name, onnx::TypeProto type);
  void Unresolved(const std::string& tensor, const std::string& part);
  void FillFromDeclared(const onnx::TypeProto& declared, onnx::TypeProto* type);
  std::string InputShapes(const onnx::NodeProto& node) const;
  absl::Status InferWithSchema(onnx::NodeProto& node, int32_t index, int opset, int schema_opset, bool lenient,
                               std::vector<onnx::TypeProto>* outputs);
  absl::Status InferWithOwnRule(const onnx::NodeProto& node, int32_t index, ShapeFn rule,
                                std::vector<onnx::TypeProto>* outputs);
  void Fold(const onnx::NodeProto& node, int opset, std::vector<onnx::TypeProto>* outputs);
  // Where output 0 could not be folded: the bounds of its values, when its inputs' are known.
  void Bound(const onnx::NodeProto& node, int opset, const std::vector<int64_t>* output_dims);
  std::vector<InputView> Views(const onnx::NodeProto& node) const;
  bool ReadsAssumed(const onnx::NodeProto& node) const;
  absl::Status ConcatOfAssumed(const onnx::NodeProto& node, int32_t index, std::vector<onnx::TypeProto>* outputs);
  void EinsumShape(const onnx::NodeProto& node, onnx::TypeProto* type);
  absl::Status Resolve(const onnx::NodeProto& node, int32_t index, int o, onnx::TypeProto type);
  absl::Status ResolveDim(const onnx::NodeProto& node, int o, int d, onnx::TensorShapeProto_Dimension* dim,
                          std::string* missing);

  struct DomainOpsets {
    int opset = 0;    // the model's
    int library = 0;  // the newest the linked library has schemas for
  };
  std::unordered_map<std::string, DomainOpsets> domains_;
  const OnnxImportOptions& options_;
  std::unordered_map<std::string, onnx::TypeProto> type_store_;  // node-based: pointers stay valid
  std::unordered_map<std::string, onnx::TypeProto*> types_;
  std::unordered_map<std::string, const onnx::TensorProto*> data_;
  std::deque<onnx::TensorProto> encoded_;
  std::unordered_map<std::string, ConstValue> consts_;
  std::unordered_map<std::string, Bounds> bounds_;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;
  std::unordered_map<std::string, int64_t> symbols_;
  std::unordered_set<std::string> unresolved_;
  std::unordered_set<std::string> assumed_;  // tensors whose shape rests on a size assumed from the data
  struct TypeWarning {
    int count = 0;      // nodes of the op type whose input types the schema refuses
    std::string first;  // the first one's message
  };
  std::map<std::string, TypeWarning> type_warnings_;
  int64_t unresolved_count_ = 0;
  std::string first_unresolved_;
  bool batch_bound_ = false;
  bool sequence_bound_ = false;
  int64_t first_input_batch_ = 0;  // the first graph input's first dimension (1 for a scalar), 0 before one
  InferredShapes result_;
};

}  // namespace placement::onnx_import

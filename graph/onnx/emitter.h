// The machinery behind control_flow.h: nodes are emitted into the flat graph in a topological order and
// inferred as they arrive, so that a control-flow node finds its condition or trip count folded by the time it
// is expanded. Scopes map a subgraph's names to the flat graph's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/status.h"
#include "graph/onnx/infer_shapes.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/op_costs.h"
#include "graph/onnx/subgraphs.h"

namespace placement::onnx_import {

// Names of one graph level: a subgraph's own tensors -> their names in the flat graph. The main graph's scope
// maps only the outputs of expanded control flow (aliases); other names stand for themselves.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, std::string> names;
};

// A control-flow node being expanded: the node as its graph holds it (its subgraphs are read in place, never
// copied, so their addresses identify them for the whole import), its inputs' flat names and the name its
// expansion goes under ("<node name>" or "<op type>_<index>").
struct ControlNode {
  const onnx::NodeProto& node;
  std::vector<std::string> inputs;
  std::string base;
};

// Whether the node is one of the sequence operators EmitSequenceOp follows.
bool IsSequenceOp(const onnx::NodeProto& node);
void SetIntAttribute(onnx::NodeProto* node, const char* name, int64_t value);
void SetIntsAttribute(onnx::NodeProto* node, const char* name, const std::vector<int64_t>& values);

class Emitter {
 public:
  Emitter(ShapeInferer* inferer, NameTable* names, const OnnxImportOptions& options, int opset, onnx::GraphProto* flat)
      : inferer_(*inferer), names_(*names), options_(options), opset_(opset), flat_(*flat) {}

  // A node of the main graph; plain nodes are moved out of it, control flow is read in place. `index` names the
  // node in messages when it has no name.
  absl::Status EmitMainNode(onnx::NodeProto* node, Scope* root, int32_t index);

  // False once anything but plain nodes of the main graph was emitted (control flow, sequences): the flat graph
  // then needs an index of its own.
  bool plain() const { return plain_; }

  // The flat-graph name of `name` as seen from `scope`.
  static const std::string& Resolve(const Scope& scope, const std::string& name);

 private:
  // A node without subgraphs, in its own graph's names.
  absl::Status EmitPlain(onnx::NodeProto node, Scope* scope, int32_t index);
  absl::Status EmitControl(const onnx::NodeProto& node, std::string base, Scope* scope, int32_t index);
  // Sequence operators (SequenceEmpty, SequenceInsert, SequenceAt, ConcatFromSequence, ...): a sequence whose
  // length static shapes decide is a list of tensors known while importing, not an operator; only what reads
  // the tensors in it (ConcatFromSequence, SplitToSequence) becomes one. `node` has its inputs resolved.
  absl::Status EmitSequenceOp(onnx::NodeProto node, Scope* scope, int32_t index);
  absl::Status EditSequence(const onnx::NodeProto& node, const std::vector<std::string>& items, const std::string& out,
                            Scope* scope, int32_t index);
  absl::Status ReadSequence(const onnx::NodeProto& node, const std::vector<std::string>& items, const std::string& out,
                            int32_t index);
  absl::Status EmitSplitToSequence(onnx::NodeProto node, const std::string& sequence, int32_t index);
  // The flat name a node's output `local` gets in `scope`.
  static std::string OutputName(const Scope& scope, const std::string& local);
  // Emits a subgraph's nodes (initializers lifted, names under `prefix`) into a scope whose formal inputs the
  // caller bound.
  absl::Status EmitBody(const onnx::GraphProto& body, Scope* scope, const std::string& prefix);
  absl::Status Append(onnx::NodeProto node, int32_t index);
  absl::Status ExpandIf(const ControlNode& c, Scope* scope);
  absl::Status ExpandLoop(const ControlNode& c, Scope* scope);
  absl::Status ExpandScan(const ControlNode& c, Scope* scope);
  // One iteration of a Loop or Scan body; `bindings` gives the formal inputs' flat names. Returns the flat names
  // of the body's outputs.
  // A Loop being unrolled.
  struct LoopRun {
    std::optional<int64_t> trips;                 // the trip count when it folds
    std::optional<bool> go;                       // the condition when it folds
    bool from_data = false;                       // the trip count is the data's: loop_iterations are assumed
    std::string condition;                        // the current condition's flat name
    std::vector<std::string> values;              // the carried values' flat names
    std::vector<std::vector<std::string>> scans;  // per scan output, each iteration's value
    std::vector<std::string> first_outputs;       // the first iteration's carried values and scan outputs
    int64_t count = 0;
  };
  absl::Status LoopStep(const ControlNode& c, const onnx::GraphProto& body, Scope* scope, LoopRun* run);
  // A Loop's or Scan's outputs: the carried values as they end, each scan output's values stacked at its axis
  // (in reverse where `reversed` says so).
  absl::Status BindLoopOutputs(const ControlNode& c, Scope* scope, const std::vector<std::string>& values,
                               const std::vector<std::vector<std::string>>& scans, const std::vector<int64_t>& axes,
                               const std::vector<int64_t>& reversed);
  absl::StatusOr<std::vector<std::string>> EmitIteration(const onnx::GraphProto& body, Scope* scope,
                                                         const std::vector<std::string>& bindings,
                                                         const std::string& prefix);

  // What one iteration of a body kept as one operator cost, for the same body met again with inputs of the
  // same types and shapes (each iteration of an outer loop expands its inner loops anew).
  struct UnitMemo {
    std::vector<onnx::TypeProto> signature;  // the loop's inputs and captured values
    OpCost per_iteration;
    int64_t body_nodes = 0;
    std::vector<onnx::TypeProto> outputs;  // one iteration's: carried values, then scan outputs unstacked
  };
  std::vector<onnx::TypeProto> Signature(const ControlNode& c, const Scope& scope) const;
  // The memo for this body when its inputs match and `trips` iterations would exceed the unroll limit.
  const UnitMemo* MemoFor(const ControlNode& c, const Scope& scope, int64_t trips) const;
  // Flat nodes [first, end) hold one iteration: records the memo and removes them.
  UnitMemo Summarize(const ControlNode& c, const Scope& scope, int first, const std::vector<std::string>& outputs);
  // One operator costing `trips` iterations whose outputs are the loop's; scan outputs are stacked at `axes`.
  absl::Status EmitUnit(const ControlNode& c, Scope* scope, const UnitMemo& memo, int64_t trips,
                        const std::vector<int64_t>& scan_axes, int carried, const std::string& why);

  // A Constant node holding `value`, emitted under `name`; returns its output's name.
  absl::StatusOr<std::string> EmitConstant(const std::string& name, onnx::TensorProto value);
  // A scalar Constant node (int64 iteration number, bool true) emitted under `name`.
  absl::StatusOr<std::string> EmitScalar(const std::string& name, int32_t elem_type, int64_t value);
  // A 1-D int64 Constant node emitted under `name`.
  absl::StatusOr<std::string> EmitInts(const std::string& name, const std::vector<int64_t>& values);
  // The per-iteration values stacked along `axis` (reversed first when `reverse`), output under `name`.
  absl::StatusOr<std::string> EmitStack(const std::string& name, std::vector<std::string> values, int64_t axis,
                                        bool reverse);
  // The type of a flat tensor as inferred.
  onnx::TypeProto TypeOf(const std::string& name) const;
  OpCost RangeCost(int first, int end) const;
  absl::Status CheckBudget() const;

  ShapeInferer& inferer_;
  NameTable& names_;
  const OnnxImportOptions& options_;
  const int opset_;  // of the default domain
  onnx::GraphProto& flat_;
  std::unordered_map<const onnx::GraphProto*, UnitMemo> units_;
  bool plain_ = true;
  std::unordered_map<std::string, std::vector<std::string>> sequences_;  // flat name -> its tensors' flat names
};

}  // namespace placement::onnx_import

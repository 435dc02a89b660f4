// Small ONNX models built in code, for tests that need a precise graph or a precisely broken one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_import.h"
#include "tests/support/temp_dir.h"

namespace placement::onnx_testing {

// A dimension: a value (negative ones too, for tests of bad input), or a symbol such as "batch"; Dim() has
// neither.
struct Dim {
  Dim() = default;
  Dim(int64_t v) : has_value(true), value(v) {}  // NOLINT: implicit on purpose, {1, "batch"} reads well
  Dim(const char* p) : param(p) {}               // NOLINT
  bool has_value = false;
  int64_t value = 0;
  std::string param;
};

onnx::ModelProto NewModel(int opset = 14);
void AddInput(onnx::ModelProto& model, const std::string& name, const std::vector<Dim>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT);
void AddOutput(onnx::ModelProto& model, const std::string& name);
onnx::NodeProto& AddNode(onnx::ModelProto& model, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name = "");
// The same for a subgraph (an If branch, a Loop body).
void AddInput(onnx::GraphProto& graph, const std::string& name, const std::vector<Dim>& dims,
              int32_t elem_type = onnx::TensorProto::FLOAT);
void AddOutput(onnx::GraphProto& graph, const std::string& name);
onnx::NodeProto& AddNode(onnx::GraphProto& graph, const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name = "");
// A Constant node named like its output, holding a scalar (INT64 or BOOL).
onnx::NodeProto& AddScalar(onnx::GraphProto& graph, const std::string& output, int64_t value,
                           int32_t elem_type = onnx::TensorProto::INT64);
// A graph attribute (then_branch, body) of the node.
onnx::GraphProto& AddGraph(onnx::NodeProto& node, const std::string& attribute);
// An initializer of zeros held in raw_data.
onnx::TensorProto& AddInitializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims,
                                  int32_t elem_type = onnx::TensorProto::FLOAT);
// An INT64 initializer with these values (shape [values.size()]).
onnx::TensorProto& AddInt64s(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> values);

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value);
void SetInts(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values);
void SetFloat(onnx::NodeProto& node, const std::string& name, float value);
void SetString(onnx::NodeProto& node, const std::string& name, const std::string& value);

std::string Serialize(const onnx::ModelProto& model);

// The model imported from its serialized bytes.
absl::StatusOr<OnnxImportResult> Import(const onnx::ModelProto& model, const OnnxImportOptions& options = {});
// Bytes of output k of the operator named `op`; -1 when there is none.
int64_t OutputBytes(const Graph& graph, const std::string& op, int k = 0);

// A model-local function of domain "custom" (imported by the model) that calls itself: Loopy(a) = Loopy(a).
void AddSelfCallingFunction(onnx::ModelProto& model);
// `levels` functions of domain "custom", F<k> calling F<k-1> twice (F0 two Relus): F<levels-1> inlines to
// 2^levels nodes.
void AddDoublingFunctions(onnx::ModelProto& model, int levels);
// scores [batch, 100] -> Greater 0 -> NonZero -> hits: the count of hits is the data's to say.
onnx::ModelProto NonZeroModel();

using ::placement::test_support::TempDir;

}  // namespace placement::onnx_testing

// The operators a transformer's graph is made of (graph/transformer_graph.h), costed as the ONNX importer costs
// the same operators of a float32 export (graph/onnx/op_costs.cc: FLOPs from the shapes, bytes = inputs, weights
// and outputs) and named as torch's exporter names them ("/model/layers.3/self_attn/q_proj/MatMul"), so that the
// cost model prices the two alike and graph/module_map.h reads their modules.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/transformer_spec.h"

namespace placement::transformer_graph {

inline constexpr int64_t kFloatBytes = 4;
inline constexpr int64_t kIndexBytes = 8;  // token ids as an export takes them, int64

// Bytes of `elements` float32 values; fractional counts (the tokens an expert gets on average) rounded.
int64_t FloatBytes(double elements);

// An operator's output as another reads it: all of it, or `bytes` of it (the K part of a fused QKV projection's
// output, the tokens routed to one expert).
struct Input {
  OpId op = kNone;
  int64_t bytes = -1;  // -1: the whole output
};

class OpWriter {
 public:
  // y = x W over `rows` rows of `in` features: MatMul, or Gemm with a bias (addmm, one kernel). The weight is
  // this operator's to hold unless `holds_weight` is false (an output layer tied to the embedding); a bias always.
  OpId Linear(absl::string_view module, Input x, double rows, int64_t in, int64_t out, bool bias,
              bool holds_weight = true);
  // `indices` rows of a table of `table_rows` x `width` picked by id (an embedding): reads the ids and the rows it
  // picks. The table is held here unless `holds_table` is false (a second reader of a shared table).
  OpId Gather(absl::string_view module, double indices, int64_t width, int64_t table_rows, bool holds_table);
  // A product of two activations (attention's scores and context) doing `flops`, writing `out_elements`.
  OpId MatMul(absl::string_view module, double flops, double out_elements, const std::vector<Input>& inputs);
  // Elementwise and row-wise operators (activations, residual additions, softmax): `flops_per_element` per output
  // element, bytes the inputs read and the output written.
  OpId Pointwise(absl::string_view module, absl::string_view op_type, double flops_per_element, double out_elements,
                 const std::vector<Input>& inputs);
  // LayerNormalization (weight and bias, 8 FLOPs an element as the importer counts it) or RMSNorm, spelled as
  // onnxruntime's SimplifiedLayerNormalization (a weight, 4 FLOPs an element: square, sum, scale, weight).
  OpId Norm(absl::string_view module, NormKind kind, Input x, double rows, int64_t width);

  int64_t OutputBytes(OpId op) const { return out_bytes_[op]; }
  int32_t num_ops() const { return static_cast<int32_t>(out_bytes_.size()); }
  absl::StatusOr<Graph> Build() && { return std::move(builder_).Build(); }

 private:
  // bytes_accessed = what the inputs carry + `other_bytes` (weights, ids) + the output.
  OpId Emit(absl::string_view module, absl::string_view op_type, double flops, double other_bytes, int64_t param_bytes,
            int64_t out_bytes, const std::vector<Input>& inputs);
  // "/model/layers.3/self_attn/MatMul", then "..._1" for the scope's next MatMul, as the exporter numbers them.
  std::string ExportName(absl::string_view module, absl::string_view op_type);

  GraphBuilder builder_;
  std::vector<int64_t> out_bytes_;
  absl::flat_hash_map<std::string, int32_t> name_uses_;
};

}  // namespace placement::transformer_graph

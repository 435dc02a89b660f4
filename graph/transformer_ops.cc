#include "graph/transformer_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement::transformer_graph {

int64_t FloatBytes(double elements) { return std::llround(elements * kFloatBytes); }

OpId OpWriter::Linear(absl::string_view module, Input x, double rows, int64_t in, int64_t out, bool bias,
                      bool holds_weight) {
  const double weights = static_cast<double>(in) * static_cast<double>(out);
  const double outputs = rows * static_cast<double>(out);
  const int64_t param_elements = (holds_weight ? in * out : 0) + (bias ? out : 0);
  // Gemm: 2 M N K, plus M N for the bias.
  return Emit(module, bias ? "Gemm" : "MatMul", 2 * outputs * static_cast<double>(in) + (bias ? outputs : 0),
              kFloatBytes * (weights + (bias ? out : 0)), param_elements * kFloatBytes, FloatBytes(outputs), {x});
}

OpId OpWriter::Gather(absl::string_view module, double indices, int64_t width, int64_t table_rows, bool holds_table) {
  const int64_t out_bytes = FloatBytes(indices * static_cast<double>(width));
  // The importer's Gather: the ids, the rows it picks (as large as its output), its output.
  return Emit(module, "Gather", 0, indices * kIndexBytes + static_cast<double>(out_bytes),
              holds_table ? table_rows * width * kFloatBytes : 0, out_bytes, {});
}

OpId OpWriter::MatMul(absl::string_view module, double flops, double out_elements, const std::vector<Input>& inputs) {
  return Emit(module, "MatMul", flops, 0, 0, FloatBytes(out_elements), inputs);
}

OpId OpWriter::Pointwise(absl::string_view module, absl::string_view op_type, double flops_per_element,
                         double out_elements, const std::vector<Input>& inputs) {
  return Emit(module, op_type, flops_per_element * out_elements, 0, 0, FloatBytes(out_elements), inputs);
}

OpId OpWriter::Norm(absl::string_view module, NormKind kind, Input x, double rows, int64_t width) {
  const bool layer_norm = kind == NormKind::kLayerNorm;
  const int64_t params = (layer_norm ? 2 : 1) * width * kFloatBytes;
  const double elements = rows * static_cast<double>(width);
  return Emit(module, layer_norm ? "LayerNormalization" : "SimplifiedLayerNormalization",
              (layer_norm ? 8 : 4) * elements, static_cast<double>(params), params, FloatBytes(elements), {x});
}

OpId OpWriter::Emit(absl::string_view module, absl::string_view op_type, double flops, double other_bytes,
                    int64_t param_bytes, int64_t out_bytes, const std::vector<Input>& inputs) {
  const OpId id = num_ops();
  OpSpec op;
  op.name = ExportName(module, op_type);
  op.op_type = std::string(op_type);
  op.flops = flops;
  op.param_bytes = param_bytes;
  op.outputs.push_back(OutputTensor{out_bytes, -1});
  double read = 0;
  for (const Input& in : inputs) {
    const int64_t bytes = in.bytes >= 0 ? in.bytes : out_bytes_[in.op];
    read += static_cast<double>(bytes);
    builder_.AddEdge(in.op, 0, id, bytes);
  }
  op.bytes_accessed = read + other_bytes + static_cast<double>(out_bytes);
  builder_.AddOp(std::move(op));
  out_bytes_.push_back(out_bytes);
  return id;
}

std::string OpWriter::ExportName(absl::string_view module, absl::string_view op_type) {
  // The exporter writes a container's child as one scope, "layers.3", the way module_map.h reads it back.
  std::string name;
  for (absl::string_view part : absl::StrSplit(module, '.', absl::SkipEmpty())) {
    const bool index = std::all_of(part.begin(), part.end(), [](char c) { return absl::ascii_isdigit(c); });
    absl::StrAppend(&name, index ? "." : "/", part);
  }
  absl::StrAppend(&name, "/", op_type);
  const int32_t uses = name_uses_[name]++;
  if (uses > 0) absl::StrAppend(&name, "_", uses);
  return name;
}

}  // namespace placement::transformer_graph

#include "graph/onnx/node_checks.h"

#include "absl/strings/str_cat.h"
#include "graph/onnx/graph_index.h"

namespace placement::onnx_import {
namespace {

// Attributes that are sizes or divisors in every standard op that has them. ONNX's inference functions
// divide by some of them unchecked (a stride of 0 in a Conv is a division by zero), so they are checked first.
absl::Status CheckPositiveAttributes(const onnx::NodeProto& node, int32_t index) {
  static const char* const kPositive[] = {"strides", "dilations", "kernel_shape", "group", "blocksize", "hidden_size"};
  for (const onnx::AttributeProto& a : node.attribute()) {
    for (const char* name : kPositive) {
      if (a.name() != name) continue;
      bool bad = (a.has_i() && a.i() < 1);
      for (int64_t v : a.ints()) bad = bad || v < 1;
      if (bad) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", NodeLabel(node, index), " attribute '", name, "' must be positive"));
      }
    }
  }
  return absl::OkStatus();
}

// The rank of a tensor whose shape is known, else -1.
int RankOf(const std::unordered_map<std::string, onnx::TypeProto*>& types, const std::string& name) {
  const auto it = types.find(name);
  if (it == types.end() || it->second == nullptr || !it->second->tensor_type().has_shape()) return -1;
  return it->second->tensor_type().shape().dim_size();
}

// ONNX 1.12's shape inference for convolutions and pooling sizes its per-axis vectors by the input's rank and
// then indexes them by the kernel's: a 2-D input with a 4-D kernel (or a kernel_shape, pads, strides or
// dilations of the wrong length) reads past their end and crashes the process (found by fuzzing, see
// tests/fuzz/corpus/onnx_import/regression_*). The ranks are checked here before ONNX sees the node.
absl::Status CheckConvPoolRanks(const onnx::NodeProto& node, int32_t index,
                                const std::unordered_map<std::string, onnx::TypeProto*>& types) {
  const std::string& op = node.op_type();
  int weight = -1;  // the input that holds the kernel, if any
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") {
    weight = 1;
  } else if (op == "QLinearConv") {
    weight = 3;
  } else if (op != "MaxPool" && op != "AveragePool" && op != "LpPool") {
    return absl::OkStatus();
  }
  if (node.input_size() == 0) return absl::OkStatus();  // the schema check names the missing input
  const int rank = RankOf(types, node.input(0));
  if (rank < 0) return absl::OkStatus();
  if (rank < 2) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": input '", node.input(0),
                                                   "' has rank ", rank, "; it needs a batch and a channel axis"));
  }
  if (weight >= 0 && weight < node.input_size()) {
    const int weight_rank = RankOf(types, node.input(weight));
    if (weight_rank >= 0 && weight_rank != rank) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": input '", node.input(0),
                                                     "' has rank ", rank, " but weight '", node.input(weight),
                                                     "' has rank ", weight_rank));
    }
  }
  const int spatial = rank - 2;
  for (const onnx::AttributeProto& a : node.attribute()) {
    int want = -1;
    if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" ||
        a.name() == "output_padding") {
      want = spatial;
    } else if (a.name() == "pads") {
      want = 2 * spatial;
    }
    if (want >= 0 && a.ints_size() != want) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": attribute '", a.name(),
                                                     "' has ", a.ints_size(), " values; an input of rank ", rank,
                                                     " needs ", want));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNodeAttributes(const onnx::NodeProto& node, int32_t index,
                                 const std::unordered_map<std::string, onnx::TypeProto*>& types) {
  absl::Status status = CheckPositiveAttributes(node, index);
  if (status.ok()) status = CheckConvPoolRanks(node, index, types);
  return status;
}

}  // namespace placement::onnx_import

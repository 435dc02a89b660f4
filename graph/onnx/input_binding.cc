#include "graph/onnx/input_binding.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace placement::onnx_import {
namespace {

enum class Rule { kNone, kDims, kBatch, kSequence };

// The rule that binds a symbolic dimension of a graph input, by the rules of docs/onnx.md.
Rule RuleFor(const std::string& symbol, const OnnxImportOptions& options) {
  if (options.dims.count(symbol) > 0) return Rule::kDims;
  std::string lower = absl::AsciiStrToLower(symbol);
  if (lower == "n" || lower.find("batch") != std::string::npos) return Rule::kBatch;
  if (lower.find("seq") != std::string::npos) return Rule::kSequence;
  return Rule::kNone;
}

}  // namespace

absl::StatusOr<BoundInput> BindInput(const onnx::ValueInfoProto& input, const OnnxImportOptions& options) {
  std::string what = absl::StrCat("graph input '", input.name(), "'");
  if (!input.type().has_tensor_type() || input.type().tensor_type().elem_type() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a tensor with an element type"));
  }
  BoundInput bound;
  bound.type = input.type();
  onnx::TypeProto_Tensor* tensor = bound.type.mutable_tensor_type();
  if (!tensor->has_shape()) {
    if (!options.allow_unresolved_dims) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has no shape (not even a rank)"));
    }
    bound.unresolved.push_back("its rank");
  }
  const int64_t batch = options.batch_size.value_or(1);
  const int64_t sequence = options.sequence_length.value_or(kDefaultSequenceLength);
  for (int d = 0; d < tensor->shape().dim_size(); ++d) {
    onnx::TensorShapeProto_Dimension* dim = tensor->mutable_shape()->mutable_dim(d);
    if (dim->has_dim_value()) {
      if (dim->dim_value() < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " has a negative dimension ", dim->dim_value(), " at index ", d));
      }
      continue;
    }
    std::optional<int64_t> value;
    if (dim->has_dim_param() && !dim->dim_param().empty()) {
      switch (RuleFor(dim->dim_param(), options)) {
        case Rule::kDims:
          value = options.dims.at(dim->dim_param());
          break;
        case Rule::kBatch:
          value = batch;
          bound.used_batch = true;
          break;
        case Rule::kSequence:
          value = sequence;
          bound.used_sequence = true;
          break;
        case Rule::kNone:
          break;
      }
      if (!value && !options.allow_unresolved_dims) {
        return absl::InvalidArgumentError(absl::StrCat(what, " dimension ", d, " is the symbol '", dim->dim_param(),
                                                       "', which no rule binds: give its value with --dim ",
                                                       dim->dim_param(), "=VALUE (dims in the RPC options)"));
      }
      if (value) bound.symbols.emplace_back(dim->dim_param(), *value);
    } else if (d == 0) {
      value = batch;  // an unnamed leading dimension is the batch by convention
      bound.used_batch = true;
    } else if (!options.allow_unresolved_dims) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " dimension ", d, " has neither a value nor a name, so it cannot be bound"));
    }
    if (!value) {
      bound.unresolved.push_back(absl::StrCat("dimension ", d));
      value = 1;
    }
    dim->set_dim_value(*value);
  }
  std::vector<int64_t> dims;
  for (const auto& dim : tensor->shape().dim()) dims.push_back(dim.dim_value());
  absl::StatusOr<TensorInfo> info = MakeTensorInfo(tensor->elem_type(), std::move(dims), what);
  if (!info.ok()) return info.status();
  bound.info = *std::move(info);
  return bound;
}

}  // namespace placement::onnx_import

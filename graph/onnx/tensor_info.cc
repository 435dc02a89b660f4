#include "graph/onnx/tensor_info.h"

#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::onnx_import {

int64_t ElementBytes(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case kFloat8E4M3FN:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2:
    case kFloat8E5M2FNUZ:
      return 1;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

bool IsFourBitType(int32_t data_type) { return data_type == kUint4 || data_type == kInt4 || data_type == kFloat4E2M1; }

bool IsKnownDataType(int32_t data_type) {
  return (data_type > onnx::TensorProto::UNDEFINED && onnx::TensorProto_DataType_IsValid(data_type)) ||
         (data_type >= kFloat8E4M3FN && data_type <= kFloat4E2M1);
}

std::string DataTypeName(int32_t data_type) {
  switch (data_type) {
    case kFloat8E4M3FN:
      return "FLOAT8E4M3FN";
    case kFloat8E4M3FNUZ:
      return "FLOAT8E4M3FNUZ";
    case kFloat8E5M2:
      return "FLOAT8E5M2";
    case kFloat8E5M2FNUZ:
      return "FLOAT8E5M2FNUZ";
    case kUint4:
      return "UINT4";
    case kInt4:
      return "INT4";
    case kFloat4E2M1:
      return "FLOAT4E2M1";
    default:
      break;
  }
  if (onnx::TensorProto_DataType_IsValid(data_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(data_type));
  }
  return absl::StrCat(data_type);
}

absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims, absl::string_view what) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has a negative dimension ", dims[i], " at index ", i, " of ", DimsString(dims)));
    }
    if (__builtin_mul_overflow(n, dims[i], &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has shape ", DimsString(dims), ": its element count overflows 64 bits"));
    }
  }
  return n;
}

absl::StatusOr<int64_t> CheckedBytes(int64_t elements, int32_t elem_type, absl::string_view what) {
  if (IsFourBitType(elem_type)) return elements / 2 + elements % 2;  // two elements a byte, the last one padded
  int64_t size = elem_type == onnx::TensorProto::STRING ? 8 : ElementBytes(elem_type);
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has element type ", DataTypeName(elem_type), ", which has no known size"));
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements, size, &bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has ", elements, " elements of ", size, " bytes: its size overflows 64 bits"));
  }
  return bytes;
}

absl::StatusOr<TensorInfo> MakeTensorInfo(int32_t elem_type, std::vector<int64_t> dims, absl::string_view what) {
  TensorInfo info;
  info.elem_type = elem_type;
  absl::StatusOr<int64_t> elements = CheckedElements(dims, what);
  if (!elements.ok()) return elements.status();
  absl::StatusOr<int64_t> bytes = CheckedBytes(*elements, elem_type, what);
  if (!bytes.ok()) return bytes.status();
  info.dims = std::move(dims);
  info.elements = *elements;
  info.bytes = *bytes;
  return info;
}

std::string DimsString(absl::Span<const int64_t> dims) { return absl::StrCat("[", absl::StrJoin(dims, ","), "]"); }

}  // namespace placement::onnx_import

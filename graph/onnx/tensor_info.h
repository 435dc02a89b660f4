// Tensor sizes for the ONNX importer: element sizes of ONNX data types and element/byte counts computed with
// checked arithmetic, because dimensions come from an untrusted file and a product can overflow int64.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace placement::onnx_import {

// A tensor once its shape is known: element type (onnx::TensorProto_DataType), static dims, and the counts.
struct TensorInfo {
  int32_t elem_type = 0;
  std::vector<int64_t> dims;
  int64_t elements = 1;
  int64_t bytes = 0;
};

// Element types newer than the linked ONNX library (IR 9 and 10, opsets 19 to 21; onnx.proto's numbers), which
// its TensorProto_DataType enum does not list.
inline constexpr int32_t kFloat8E4M3FN = 17;
inline constexpr int32_t kFloat8E4M3FNUZ = 18;
inline constexpr int32_t kFloat8E5M2 = 19;
inline constexpr int32_t kFloat8E5M2FNUZ = 20;
inline constexpr int32_t kUint4 = 21;
inline constexpr int32_t kInt4 = 22;
inline constexpr int32_t kFloat4E2M1 = 23;

// Bytes of one element; 0 for types without a fixed size (STRING), the 4-bit types and unknown codes.
int64_t ElementBytes(int32_t data_type);
// UINT4, INT4 and FLOAT4E2M1: two elements share a byte.
bool IsFourBitType(int32_t data_type);
// A data type ONNX defines (UNDEFINED is not one), the newer ones included.
bool IsKnownDataType(int32_t data_type);
// "FLOAT", "INT64", ... or the number for unknown codes.
std::string DataTypeName(int32_t data_type);

// Product of the dims. InvalidArgument when one is negative or the product overflows int64; `what` names the
// tensor (e.g. "initializer 'fc.weight'").
absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims, absl::string_view what);

// elements * ElementBytes(elem_type) with the same checks; STRING tensors count 8 bytes an element (a pointer),
// 4-bit types half a byte (rounded up).
absl::StatusOr<int64_t> CheckedBytes(int64_t elements, int32_t elem_type, absl::string_view what);

// Fills elements and bytes from elem_type and dims.
absl::StatusOr<TensorInfo> MakeTensorInfo(int32_t elem_type, std::vector<int64_t> dims, absl::string_view what);

// "[1,3,224,224]".
std::string DimsString(absl::Span<const int64_t> dims);

}  // namespace placement::onnx_import

#include "graph/onnx/initializers.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement::onnx_import {
namespace {

// Number of values the typed repeated field must hold for a tensor of `elements` elements, and how many it
// holds; -1 when no typed field applies.
std::pair<int64_t, int64_t> TypedFieldCounts(const onnx::TensorProto& t, int64_t elements) {
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      return {elements, t.float_data_size()};
    case onnx::TensorProto::COMPLEX64:
      return {2 * elements, t.float_data_size()};
    case onnx::TensorProto::DOUBLE:
      return {elements, t.double_data_size()};
    case onnx::TensorProto::COMPLEX128:
      return {2 * elements, t.double_data_size()};
    case onnx::TensorProto::INT64:
      return {elements, t.int64_data_size()};
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      return {elements, t.uint64_data_size()};
    case onnx::TensorProto::STRING:
      return {elements, t.string_data_size()};
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case kFloat8E4M3FN:
    case kFloat8E4M3FNUZ:
    case kFloat8E5M2:
    case kFloat8E5M2FNUZ:
      return {elements, t.int32_data_size()};
    case kUint4:
    case kInt4:
    case kFloat4E2M1:
      return {elements / 2 + elements % 2, t.int32_data_size()};  // two 4-bit values an entry
    default:
      return {-1, -1};
  }
}

absl::Status CheckInlineData(const onnx::TensorProto& t, const TensorInfo& info, const std::string& what) {
  if (t.has_raw_data()) {
    if (t.data_type() != onnx::TensorProto::STRING && static_cast<int64_t>(t.raw_data().size()) != info.bytes) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has ", t.raw_data().size(), " bytes of raw_data but ",
                                                     DataTypeName(t.data_type()), " shape ", DimsString(info.dims),
                                                     " needs ", info.bytes));
    }
    return absl::OkStatus();
  }
  auto [expected, held] = TypedFieldCounts(t, info.elements);
  // No data at all keeps the declared shape: some tools strip weights and leave the dims.
  if (expected >= 0 && held > 0 && held != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " holds ", held, " values but shape ", DimsString(info.dims), " needs ", expected));
  }
  return absl::OkStatus();
}

bool EscapesFolder(const std::string& location) {
  if (location.empty() || location[0] == '/' || location[0] == '\\') return true;
  for (absl::string_view part : absl::StrSplit(location, absl::ByAnyChar("/\\"))) {
    if (part == "..") return true;
  }
  return false;
}

absl::StatusOr<int64_t> ParseCount(const std::string& value, const std::string& key, const std::string& what) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": external_data ", key, " '", value, "' is not a non-negative integer"));
  }
  return n;
}

std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

absl::Status CheckExternalData(const onnx::TensorProto& t, const TensorInfo& info, const std::string& model_dir,
                               const std::string& what) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& entry : t.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      absl::StatusOr<int64_t> n = ParseCount(entry.value(), "offset", what);
      if (!n.ok()) return n.status();
      offset = *n;
    } else if (entry.key() == "length") {
      absl::StatusOr<int64_t> n = ParseCount(entry.value(), "length", what);
      if (!n.ok()) return n.status();
      length = *n;
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has external data without a location"));
  }
  if (EscapesFolder(location)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has external data at '", location,
                     "', which is outside the model's folder: locations must be relative paths without '..'"));
  }
  if (model_dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " keeps its data in '", location, "' but the model's folder is unknown (set model_dir)"));
  }
  if (length >= 0 && length != info.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external_data length ", length, " differs from the ",
                                                   info.bytes, " bytes of its shape ", DimsString(info.dims)));
  }
  std::string path = absl::StrCat(model_dir, "/", location);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(what, ": external data file '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data '", path, "' is not a regular file"));
  }
  // A symbolic link inside the folder could still lead out of it.
  std::string real_dir = RealPath(model_dir);
  std::string real_file = RealPath(path);
  if (real_dir.empty() || real_file.compare(0, real_dir.size() + 1, real_dir + "/") != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": external data '", location, "' resolves outside the model's folder"));
  }
  int64_t end = 0;
  if (__builtin_add_overflow(offset, info.bytes, &end) || end > static_cast<int64_t>(st.st_size)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data needs bytes ", offset, " to ", offset, " + ",
                                                   info.bytes, " of '", location, "', which has ",
                                                   static_cast<int64_t>(st.st_size)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TensorInfo> InitializerInfo(const onnx::TensorProto& init, const std::string& model_dir) {
  std::string what = absl::StrCat("initializer '", init.name(), "'");
  if (!IsKnownDataType(init.data_type())) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has an unknown data_type ", init.data_type()));
  }
  std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
  absl::StatusOr<TensorInfo> info = MakeTensorInfo(init.data_type(), std::move(dims), what);
  if (!info.ok()) return info.status();
  absl::Status status = init.data_location() == onnx::TensorProto::EXTERNAL
                            ? CheckExternalData(init, *info, model_dir, what)
                            : CheckInlineData(init, *info, what);
  if (!status.ok()) return status;
  return info;
}

}  // namespace placement::onnx_import

#include "graph/onnx/model_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/schema.h>

#include "absl/strings/str_cat.h"

namespace placement::onnx_import {
namespace {

absl::StatusOr<onnx::ModelProto> ParseStream(google::protobuf::io::ZeroCopyInputStream* stream) {
  google::protobuf::io::CodedInputStream coded(stream);
  // The default limit differs between protobuf releases; every valid model fits under INT_MAX.
  coded.SetTotalBytesLimit(INT_MAX);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as an onnx.ModelProto (truncated, or another format)");
  }
  return model;
}

bool ReadVarint(absl::string_view bytes, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && *pos < bytes.size(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    *value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Wire type of each ModelProto field (onnx.proto), or -1 for numbers that ModelProto does not have.
int ModelFieldWireType(uint64_t field) {
  switch (field) {
    case 1:  // ir_version
    case 5:  // model_version
      return 0;
    case 2:
    case 3:
    case 4:
    case 6:
    case 7:
    case 8:
    case 14:
    case 20:
    case 25:
      return 2;  // strings and messages
    default:
      return -1;
  }
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseModelBytes(absl::string_view bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError("not a valid ONNX model: the input is empty");
  if (static_cast<int64_t>(bytes.size()) > kMaxModelBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model is ", bytes.size(),
                     " bytes; protobuf messages are limited to 2 GiB, so a model this large "
                     "must keep its weights as external data"));
  }
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  return ParseStream(&stream);
}

absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  } else if (st.st_size == 0) {
    status = absl::InvalidArgumentError(absl::StrCat("'", path, "': not a valid ONNX model: the file is empty"));
  } else if (st.st_size > kMaxModelBytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is ", st.st_size,
                     " bytes; protobuf messages are limited to 2 GiB, so a model this large "
                     "must keep its weights as external data (onnx.save_model(..., save_as_external_data=True))"));
  }
  if (!status.ok()) {
    ::close(fd);
    return status;
  }
  absl::StatusOr<onnx::ModelProto> model;
  {
    google::protobuf::io::FileInputStream stream(fd);
    model = ParseStream(&stream);
    if (stream.GetErrno() != 0) {
      model = absl::InvalidArgumentError(absl::StrCat("reading failed: ", std::strerror(stream.GetErrno())));
    }
  }
  ::close(fd);
  if (!model.ok()) return absl::Status(model.status().code(), absl::StrCat("'", path, "': ", model.status().message()));
  return model;
}

absl::StatusOr<std::unordered_map<std::string, int>> CheckModelHeader(const onnx::ModelProto& model) {
  if (!model.has_ir_version() || model.ir_version() <= 0) {
    return absl::InvalidArgumentError("not a valid ONNX model: ir_version is missing");
  }
  // IR 3 (ONNX 1.0) introduced operator-set imports; older files cannot say which operator semantics they use.
  if (model.ir_version() < 3 || model.ir_version() > kMaxIrVersion) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported ONNX IR version ", model.ir_version(),
                                                   ": this importer reads IR versions 3 to ", kMaxIrVersion));
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::unordered_map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    auto range = ranges.find(domain);
    if (range != ranges.end()) {
      const int64_t last = std::max<int64_t>(range->second.second, MaxKnownOpset(domain));
      if (opset.version() < range->second.first || opset.version() > last) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unsupported opset version ", opset.version(), " for domain '", domain.empty() ? "ai.onnx" : domain,
            "': this importer knows versions ", range->second.first, " to ", last, " (docs/onnx.md)"));
      }
    }
    if (!opsets.emplace(domain, static_cast<int>(opset.version())).second) {
      return absl::InvalidArgumentError(absl::StrCat("opset_import lists domain '", opset.domain(), "' twice"));
    }
  }
  if (opsets.count("") == 0) {
    return absl::InvalidArgumentError("opset_import has no entry for the default domain 'ai.onnx'");
  }
  if (!model.has_graph() || model.graph().node_size() == 0) {
    return absl::InvalidArgumentError("the model has no graph or its graph has no nodes");
  }
  return opsets;
}

int MaxLibraryOpset(const std::string& domain) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto range = ranges.find(domain == "ai.onnx" ? "" : domain);
  return range == ranges.end() ? INT_MAX : range->second.second;
}

int MaxKnownOpset(const std::string& domain) {
  if (domain.empty() || domain == "ai.onnx") return kMaxDefaultOpset;
  if (domain == "ai.onnx.ml") return kMaxMlOpset;
  return 0;
}

bool SniffModelProto(absl::string_view bytes) {
  // Serializers write fields in number order and every valid model has ir_version (field 1), so a model
  // starts with the varint tag 0x08, a plausible version, and then another ModelProto field. Text formats
  // such as JSON start with '{', '[' or whitespace and never pass.
  size_t pos = 0;
  uint64_t tag = 0, version = 0;
  if (!ReadVarint(bytes, &pos, &tag) || tag != 0x08) return false;
  if (!ReadVarint(bytes, &pos, &version) || version == 0 || version > 100) return false;
  if (pos == bytes.size()) return true;
  if (!ReadVarint(bytes, &pos, &tag)) return pos == bytes.size();  // a prefix cut inside the tag
  int wire = ModelFieldWireType(tag >> 3);
  return wire >= 0 && wire == static_cast<int>(tag & 7);
}

}  // namespace placement::onnx_import

#include "server/request_key.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "server/cache.h"
#include "server/cache_entry.h"
#include "server/request_decoder.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

// The graph message has no canonical bytes of its own; deterministic serialization gives equal messages
// equal bytes within this build, which is all a cache key needs.
std::string DeterministicBytes(const pb::Graph& graph) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  graph.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

std::string PayloadPart(const pb::PlaceRequest& r, const std::string& payload_hash) {
  switch (r.graph_source_case()) {
    case pb::PlaceRequest::kOnnx:
      return absl::StrCat("request/onnx:", payload_hash);
    case pb::PlaceRequest::kGraphJson:
      return absl::StrCat("request/json:", payload_hash);
    case pb::PlaceRequest::kGraph:
      return absl::StrCat("request/proto:", payload_hash);
    case pb::PlaceRequest::kHfConfig:
      return absl::StrCat("request/hf_config:", payload_hash);
    default:
      return "request/none";
  }
}

std::string TopologyPart(const pb::PlaceRequest& r) {
  if (!r.has_topology()) return "none";
  switch (r.topology().source_case()) {
    case pb::Topology::kShorthand:
      return absl::StrCat("shorthand:", r.topology().shorthand());
    case pb::Topology::kJson:
      return absl::StrCat("json:", r.topology().json());
    default:
      return "none";
  }
}

}  // namespace

std::string PayloadHash(const pb::PlaceRequest& r) {
  switch (r.graph_source_case()) {
    case pb::PlaceRequest::kOnnx:
      return Sha256Hex(r.onnx());
    case pb::PlaceRequest::kGraphJson:
      return Sha256Hex(r.graph_json());
    case pb::PlaceRequest::kGraph:
      return Sha256Hex(DeterministicBytes(r.graph()));
    case pb::PlaceRequest::kHfConfig:
      return Sha256Hex(r.hf_config());
    default:
      return "";
  }
}

std::string RequestCacheKey(const pb::PlaceRequest& request, const std::string& payload_hash,
                            const std::string& algorithm, int64_t budget_ms, const std::string& policy_version) {
  CacheKeyParts parts;
  parts.graph_hash = PayloadPart(request, payload_hash);
  parts.topology = TopologyPart(request);
  parts.objective = absl::StrCat("proto:", static_cast<int>(request.objective()));
  // An unknown name never reaches a lookup: Place refuses it before; PlaceFromMemory then finds nothing.
  absl::StatusOr<CostModelKind> cost_model = ParseCostModel(request.cost_model());
  parts.cost_model = cost_model.ok() ? CanonicalCostModel(*cost_model) : absl::StrCat("unknown:", request.cost_model());
  parts.algorithm = algorithm;
  parts.graph_options = CanonicalGraphOptions(request.options());
  parts.simulator = CanonicalSimulator(request.simulator());
  parts.plan_options = CanonicalPlanOptions(request);
  parts.seed = request.seed() == 0 ? 1 : request.seed();
  parts.budget_ms = budget_ms;
  parts.policy_version = policy_version;
  parts.time_unit = "from the payload";
  return AnswerCache::Key(parts);
}

}  // namespace placement::server

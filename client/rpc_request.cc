#include "client/rpc_request.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/canonical.h"
#include "graph/onnx/graph_format.h"
#include "graph/onnx/onnx_import.h"
#include "graph/transformer_spec.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;

// PlaceRequest and SimulateRequest name their graph fields alike.
template <typename Request>
void SetSource(const GraphPayload& payload, Request* request) {
  if (payload.onnx) {
    request->set_onnx(payload.bytes);
  } else {
    request->set_graph_json(payload.bytes);
  }
}

void SetSource(const GraphPayload& payload, pb::PlaceRequest* request) {
  if (payload.hf_config) {
    request->set_hf_config(payload.bytes);
  } else {
    SetSource<pb::PlaceRequest>(payload, request);
  }
}

template <typename Request>
void FillGraph(const GraphPayload& payload, const GraphLoadOptions& load, Request* request) {
  SetSource(payload, request);
  pb::GraphOptions* o = request->mutable_options();
  o->set_batch_size(load.batch);
  o->set_sequence_length(load.sequence_length);
  for (const auto& [name, value] : load.dims) (*o->mutable_dims())[name] = value;
  o->set_allow_unresolved_dims(load.allow_unresolved_dims);
  if (load.num_data_inputs >= 0) o->set_num_data_inputs(load.num_data_inputs);
  o->set_loop_iterations(load.loop_iterations);
  o->set_max_unrolled_nodes(load.max_unrolled_nodes);
  o->set_costs(load.costs_text);
  if (load.costs_kind != "*") o->set_costs_kind(load.costs_kind);
  o->set_training(load.training);
  if (load.training) {
    o->set_optimizer(load.optimizer);
    o->set_backward_multiplier(load.backward_multiplier);
  }
  if (load.precision != "fp32") o->set_precision(load.precision);
  if (load.runtime != "eager") o->set_runtime(load.runtime);  // unset: the cache key of fp32 requests stays
}

}  // namespace

absl::StatusOr<GraphPayload> ReadGraphPayload(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  // Refused here, by the same rule as a local command, rather than sent as text that is not text.
  const GraphFormat format = DetectGraphFormat(*bytes);
  GraphPayload payload;
  payload.hf_config = format == GraphFormat::kUnknown && LooksLikeHfConfig(*bytes);
  if (format == GraphFormat::kUnknown && !payload.hf_config) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", UnknownGraphFormatMessage(*bytes)));
  }
  payload.onnx = format == GraphFormat::kOnnx;
  payload.bytes = *std::move(bytes);
  payload.sha256 = Sha256Hex(payload.bytes);
  return payload;
}

void SetGraph(const GraphPayload& payload, const GraphLoadOptions& load, pb::PlaceRequest* request) {
  FillGraph(payload, load, request);
}

void SetGraph(const GraphPayload& payload, const GraphLoadOptions& load, pb::SimulateRequest* request) {
  FillGraph(payload, load, request);
}

void SetPlanRequest(const PlanOptions& plan, pb::PlaceRequest* request) {
  request->set_parallelism(plan.parallelism);
  request->set_schedule(plan.schedule);
  request->set_sharding(plan.sharding);
  request->set_recompute(plan.recompute);
  request->set_global_batch(plan.global_batch);
  request->set_micro_batch_size(plan.micro_batch);
}

absl::Status SetTopology(const std::string& topology_file, const std::string& devices, pb::Topology* topology) {
  if (!topology_file.empty() && !devices.empty()) {
    return absl::InvalidArgumentError("give either --topology FILE or --devices SPEC, not both");
  }
  if (!devices.empty()) {
    topology->set_shorthand(devices);
  } else if (!topology_file.empty()) {
    absl::StatusOr<std::string> text = ReadWholeFile(topology_file);
    if (!text.ok()) return text.status();
    topology->set_json(*std::move(text));
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::Objective> ObjectiveFromFlag(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "step_time") return pb::OBJECTIVE_STEP_TIME;
  if (n == "throughput") return pb::OBJECTIVE_THROUGHPUT;
  if (n == "latency") return pb::OBJECTIVE_LATENCY;
  return absl::InvalidArgumentError(
      absl::StrCat("--objective '", name, "' is not one of step_time, throughput, latency"));
}

void AddGraphHashHeader(const GraphPayload& payload, grpc::ClientContext* context) {
  context->AddMetadata(kGraphHashHeader, payload.sha256);
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& address) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat("cannot reach the server at ", address, ": ", status.error_message()));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(
          absl::StrCat("no answer from ", address, " before the deadline: ", status.error_message()));
    default:
      return v1::FromGrpcStatus(status);
  }
}

}  // namespace placement::cli

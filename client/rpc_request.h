// What every placectl call to a server shares: the graph file sent as it is (ONNX bytes or JSON text), the
// x-graph-hash routing header over exactly those bytes, and gRPC failures turned into messages and exit codes.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/graph_loader.h"
#include "client/place_command.h"
#include "placement/v1/placement.pb.h"
#include "proto/placement/v1/metadata.h"

namespace placement::cli {

// Metadata every Place, PlaceStream and Simulate call carries: the lower-case hex SHA-256 of the graph payload
// bytes as sent, so that an L7 balancer can send repeats of a graph to the same replica (and its cache).
using ::placement::v1::kGraphHashHeader;

struct GraphPayload {
  bool onnx = false;  // else JSON text (our format or a Tarnawski graph; the server tells them apart)
  // A Hugging Face config.json: a Place request carries it as hf_config (the server answers with a training plan).
  bool hf_config = false;
  std::string bytes;
  std::string sha256;  // of bytes, lower-case hex
};

// Reads the file; NOT_FOUND naming it when it cannot be read.
absl::StatusOr<GraphPayload> ReadGraphPayload(const std::string& path);

// Sets graph_source and the graph options of a request (PlaceRequest or SimulateRequest; only the first has
// hf_config).
void SetGraph(const GraphPayload& payload, const GraphLoadOptions& load, placement::v1::PlaceRequest* request);
void SetGraph(const GraphPayload& payload, const GraphLoadOptions& load, placement::v1::SimulateRequest* request);

// The plan options of a PlaceRequest (parallelism, schedule, sharding, recompute, global batch, micro-batch).
void SetPlanRequest(const PlanOptions& plan, placement::v1::PlaceRequest* request);

// The topology from --topology FILE (its JSON text) or --devices SPEC; neither leaves it unset (the graph's
// own devices). Both is INVALID_ARGUMENT.
absl::Status SetTopology(const std::string& topology_file, const std::string& devices,
                         placement::v1::Topology* topology);

absl::StatusOr<placement::v1::Objective> ObjectiveFromFlag(const std::string& name);

void AddGraphHashHeader(const GraphPayload& payload, grpc::ClientContext* context);

// A failed call as an absl::Status with the same code; UNAVAILABLE says the server at `address` could not be
// reached, DEADLINE_EXCEEDED that the call's deadline passed.
absl::Status FromGrpc(const grpc::Status& status, const std::string& address);

}  // namespace placement::cli

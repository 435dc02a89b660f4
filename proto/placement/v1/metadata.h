// The gRPC metadata of placement.v1 beside the messages: what clients send and the server and balancers read.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace placement::v1 {

// Lower-case hex SHA-256 of the graph payload as sent (docs/server.md): the key balancers hash on.
inline constexpr char kGraphHashHeader[] = "x-graph-hash";
// The request's id, sent back by the server (and in its log lines).
inline constexpr char kRequestIdHeader[] = "x-request-id";

// A call's gRPC status as an absl::Status, code and message as they are (server/status_mapping.h maps the other
// way, in one place for the service).
inline absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace placement::v1

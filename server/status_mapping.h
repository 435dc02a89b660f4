// The one place where the service's absl::Status becomes the grpc::Status a client sees.
//
// Everything behind the RPC handlers speaks absl::Status; the two code spaces have the same numbering, so the
// mapping keeps the code. Messages are kept but bounded: a status travels in the trailing metadata, and a
// client refuses metadata over its limit (8 KiB by default), which would turn a precise INVALID_ARGUMENT into
// an opaque transport error.
#pragma once

#include <cstddef>

#include <grpcpp/support/status.h>
#include "absl/status/status.h"
#include "proto/placement/v1/metadata.h"

namespace placement::server {

// Longest message sent to a client; longer ones are cut with a note of how much was dropped.
inline constexpr size_t kMaxStatusMessageBytes = 2048;

grpc::Status ToGrpcStatus(const absl::Status& status);

// The inverse, for clients of the service (placement_probe, tests).
using ::placement::v1::FromGrpcStatus;

// "OK", "INVALID_ARGUMENT", ...: the metrics label of a finished request.
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace placement::server

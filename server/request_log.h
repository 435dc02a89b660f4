// Request ids and log lines. Every line a request causes carries its id, and the client gets the same id in
// the x-request-id response metadata (and in the response), so a report from a user finds its log lines.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "proto/placement/v1/metadata.h"

namespace placement::server {

using ::placement::v1::kRequestIdHeader;
// Clients' load-balancing key: the SHA-256 of the graph payload (docs/server.md); checked, never trusted.
using ::placement::v1::kGraphHashHeader;

// The client's own id when it sent a usable one (1 to 64 characters of [A-Za-z0-9._:-]), else a new random
// 16-hex-digit id.
std::string RequestIdFrom(absl::string_view client_id);

// One line on stderr: "<UTC time> [<request id>] <text>", control characters in the text written as \xNN.
// Written with a single write(2), so lines from concurrent requests do not interleave. An empty id logs a
// server line ("[server]").
void LogLine(absl::string_view request_id, absl::string_view text);

}  // namespace placement::server

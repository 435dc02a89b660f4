// What one request may ask of the server. Larger requests are refused with RESOURCE_EXHAUSTED naming the
// limit and the flag that sets it, before the work that would exhaust the server starts.
#pragma once

#include <cstdint>

#include "absl/time/time.h"

namespace placement::server {

struct ServerLimits {
  // Largest request or response message. A 100k-operator graph with names and costs is tens of MB on the wire.
  int64_t max_message_bytes = int64_t{256} << 20;
  // Of the graph that is placed, i.e. after a training expansion (about 2-4x the forward graph).
  int64_t max_operators = 500'000;
  int64_t max_edges = 4'000'000;
  int64_t max_devices = 1024;
  // The placer's budget when a request gives none, and the most a request may ask for; the client's gRPC
  // deadline bounds both.
  absl::Duration default_budget = absl::Seconds(10);
  absl::Duration max_budget = absl::Minutes(5);
};

}  // namespace placement::server

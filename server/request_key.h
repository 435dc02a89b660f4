// The answer cache's key for a Place request as it arrived, computable without decoding the graph.
//
// The canonical key (graph hash of the decoded graph, canonical topology) needs the ONNX model imported first,
// which costs tens of milliseconds; this one hashes the graph payload's bytes instead, so a repeated request is
// answered from the cache before any decoding. Both keys live in the same store: the request key's graph part
// is "request/<source>:<SHA-256 of the payload>", which no graph hash (64 hex digits) can equal, and its
// topology part is the request's own text, prefixed with its kind. Different bytes for the same graph are a miss
// here and a hit under the canonical key.
#pragma once

#include <cstdint>
#include <string>

#include "placement/v1/placement.pb.h"

namespace placement::server {

// Lower-case hex SHA-256 of the graph payload: the onnx bytes, the graph_json or hf_config text, or the Graph
// message's deterministic serialization; what clients send as x-graph-hash. "" when the request has no graph.
std::string PayloadHash(const placement::v1::PlaceRequest& request);

// `payload_hash` is PayloadHash(request), `algorithm` the placer's name ("auto" for ""), `budget_ms` the
// nominal budget (PlanBudget).
std::string RequestCacheKey(const placement::v1::PlaceRequest& request, const std::string& payload_hash,
                            const std::string& algorithm, int64_t budget_ms, const std::string& policy_version);

}  // namespace placement::server

// A Place request that describes a transformer by its Hugging Face config.json (PlaceRequest.hf_config), answered
// with its training plan: tensor, pipeline and data parallelism, ZeRO, recomputation and the micro-batch size
// searched by the layer-level model (policy/parallel/transformer_search.h) on the cluster the request's topology
// describes, the same search `placectl place` runs on a config.json. What is here is the request's checks and the
// search's answer on the wire; the engine keys, caches and counts it as any Place call
// (placement_engine_transformer.cc).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cluster_shape.h"
#include "graph/transformer_spec.h"
#include "placement/v1/placement.pb.h"
#include "policy/parallel/transformer_search.h"
#include "policy/placer.h"
#include "server/limits.h"
#include "simulator/transformer_plan.h"

namespace placement::server {

// PlaceResponse.algorithm of these answers, and their metrics label.
inline constexpr char kTransformerSearch[] = "transformer_search";

inline bool IsTransformerRequest(const placement::v1::PlaceRequest& request) {
  return request.graph_source_case() == placement::v1::PlaceRequest::kHfConfig;
}

// What a config.json request asks for, checked.
struct TransformerQuery {
  TransformerSpec spec;
  ClusterShape cluster;
  transformer::TrainingRun run;
  parallel::TransformerSearchOptions search;
  std::string precision;           // as requested, "fp32" for ""
  std::vector<std::string> notes;  // what was assumed
};

// INVALID_ARGUMENT naming the field for a bad config, topology, batch, sequence length, precision or
// transformer_plan, and naming every option given that applies to graphs only (parallelism other than "", "auto"
// and "tensor" among them); UNIMPLEMENTED for an architecture or a cluster the plan model does not cover;
// RESOURCE_EXHAUSTED for a topology over the server's device limit.
absl::StatusOr<TransformerQuery> DecodeTransformerRequest(const placement::v1::PlaceRequest& request,
                                                          const ServerLimits& limits);

// The search within `budget`, as the answer (without request id, graph hash or policy version). FAILED_PRECONDITION
// with the search's message when no plan fits memory, INVALID_ARGUMENT when none tiles the cluster, the budget's
// status when it runs out before a plan that fits is found.
absl::StatusOr<placement::v1::PlaceResponse> AnswerTransformerQuery(const TransformerQuery& query,
                                                                    const Budget& budget);

}  // namespace placement::server

// PlacementEngine's answer to a request with hf_config, in a file of its own so that placement_engine.cc keeps to
// the graph's steps. A config's plan needs no graph: the request key (request_key.h, over the config's text, the
// topology as sent, the options and transformer_plan) is the only key, and the answer is cached under it.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "server/placement_engine.h"
#include "server/request_key.h"
#include "server/transformer_answer.h"

namespace placement::server {

namespace pb = ::placement::v1;

absl::StatusOr<pb::PlaceResponse> PlacementEngine::PlaceTransformer(const pb::PlaceRequest& request,
                                                                    const CallControl& control) const {
  ASSIGN_OR_RETURN(const TransformerQuery query, DecodeTransformerRequest(request, config_.limits));
  // DecodeTransformerRequest refuses a named policy: the default one's version is the answer's.
  const std::string& policy_version = serving_.front().policy_version;
  const bool use_cache = cache_ != nullptr && !request.skip_cache();
  // As PlaceFromMemory computes it, so that its in-memory lookups find what is stored here.
  const std::string algorithm = request.algorithm().empty() ? kDefaultAlgorithm : request.algorithm();
  const std::string key =
      !control.request_key.empty() ? control.request_key : RequestKey(request, algorithm, policy_version, control);
  if (use_cache) {
    if (std::optional<pb::PlaceResponse> hit = Cached(key, control, /*count_miss=*/true)) return *std::move(hit);
  }

  const BudgetPlan plan = PlanBudget(request.budget_ms(), control, config_.limits, /*num_ops=*/0);
  if (control.on_phase) {
    control.on_phase(absl::StrCat("searching the plans of a ", query.spec.model_type, " on ", query.cluster.name,
                                  " (budget ", absl::FormatDuration(plan.deadline - absl::Now()), ")"));
  }
  ASSIGN_OR_RETURN(pb::PlaceResponse response, AnswerTransformerQuery(query, Budget{plan.deadline, control.cancelled}));
  response.set_graph_hash(PayloadHash(request));
  response.set_policy_version(policy_version);
  if (!plan.warning.empty()) response.add_warnings(plan.warning);
  // A search the deadline stopped is the best of the plans it reached in that time: not the answer for the key.
  if (cache_ != nullptr && !plan.cut_by_client && response.transformer().search_complete()) {
    Store(key, response, control);
  }
  response.set_request_id(control.request_id);
  return response;
}

}  // namespace placement::server

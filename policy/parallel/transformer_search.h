// The plan space people train transformers in (simulator/transformer_plan.h), searched: tensor parallelism inside a
// host, pipeline stages over whole layers, interleaving, data parallelism with ZeRO stages 0-3, recomputation
// (none, selective, full), sequence parallelism and the micro-batch size, every combination that tiles the cluster
// evaluated by the layer model (a few microseconds each: the repeated layers are priced once), the fastest plan
// that fits memory kept. Plain data parallelism is scored beside it so the answer can say what the plan gains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cluster_shape.h"
#include "graph/transformer_spec.h"
#include "policy/placer.h"
#include "simulator/transformer_plan.h"

namespace placement::parallel {

struct TransformerSearchOptions {
  bool tensor_only = false;  // --parallelism tensor: every GPU in one tensor-parallel group (pp = dp = 1)
  // What the user holds fixed (--plan with some keys): only plans agreeing on `fixed_keys` are searched. Flash
  // attention and overlapped gradient reduction are on unless fixed off.
  transformer::TransformerPlan fixed;
  std::vector<std::string> fixed_keys;
};

struct TransformerSearchResult {
  transformer::TransformerPlanResult best;
  // Plain data parallelism (tp = pp = 1, ZeRO 0, no recomputation, the largest micro-batch that fits, else 1),
  // scored whether or not it fits.
  absl::StatusOr<transformer::TransformerPlanResult> data_parallel = absl::UnknownError("not scored");
  int64_t evaluated = 0;  // plans scored
  int64_t fitting = 0;    // of those, plans that fit memory
  bool complete = true;   // false when the budget ran out before every plan was scored
  std::string reason;     // why the best plan, in a sentence: what it gains over data parallelism
};

// FAILED_PRECONDITION when no plan fits memory (the message gives the least memory any plan needs and what would
// make one fit); INVALID_ARGUMENT when no plan tiles the cluster (the global batch, the heads or the layers do not
// divide); the budget's status when it expires before any plan that fits is found.
absl::StatusOr<TransformerSearchResult> SearchTransformerPlans(const TransformerSpec& spec, const ClusterShape& cluster,
                                                               const transformer::TrainingRun& run,
                                                               const TransformerSearchOptions& options,
                                                               const Budget& budget);

}  // namespace placement::parallel

// A parallel plan as an answer's JSON writes it (`placectl place --output json`: its stages with their operators
// and devices, schedule, micro-batches and micro-batch size), read back so that `simulate` scores the plan the
// answer gave rather than its first replicas' placement.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "simulator/parallel_plan.h"

namespace placement::cli {

struct PlanFile {
  ParallelPlan plan;
  int64_t micro_batch_size = 1;  // samples per micro-batch: the batch the graph was bound to
};

// The samples per micro-batch and in all that a plan file names; nullopt for a file that is no plan (no "stages")
// or is not JSON (ParsePlanJson says why).
struct PlanBatch {
  int64_t micro_batch_size = 1;
  int64_t global_batch = 0;
};
std::optional<PlanBatch> PlanBatchOf(absl::string_view json_text);

// nullopt for a plain placement file; INVALID_ARGUMENT naming the stage and operator or device that the graph or
// cluster loaded here does not have, or an operator no stage holds.
absl::StatusOr<std::optional<PlanFile>> ParsePlanJson(absl::string_view json_text, const Graph& graph,
                                                      const Topology& topology);

}  // namespace placement::cli

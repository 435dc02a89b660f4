// A parallel plan as answers name it (stages of device and operator names, a schedule, micro-batches), read back on
// the graph and cluster loaded here: from an answer's JSON (`placectl place --output json`), so that `simulate`
// scores the plan the answer gave rather than its first replicas' placement, and from a server's answer (its chart).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "simulator/parallel_plan.h"

namespace placement::cli {

// One stage as an answer names it.
struct NamedStage {
  std::vector<std::string> devices;
  std::vector<std::string> operators;
};

// The stages as a plan on the graph and cluster loaded here (schedule and global batch left to the caller):
// INVALID_ARGUMENT naming the stage and the device or operator they do not have, or an operator no stage holds.
absl::StatusOr<ParallelPlan> PlanFromNamedStages(const std::vector<NamedStage>& stages, const Graph& graph,
                                                 const Topology& topology);

// An answer's JSON that holds a plan ("stages"); nullopt for a plain placement file or text that is not JSON
// (the placement reader says why).
std::optional<nlohmann::json> PlanDocument(absl::string_view json_text);

struct PlanFile {
  ParallelPlan plan;
  int64_t micro_batch_size = 1;  // samples per micro-batch: the batch the graph was bound to
};

// The samples per micro-batch and per step a plan document names, before any graph is loaded.
int64_t MicroBatchSizeOf(const nlohmann::json& plan);
int64_t GlobalSamplesOf(const nlohmann::json& plan);

// The plan a document gives: PlanFromNamedStages' errors, and INVALID_ARGUMENT for a stage without 'devices' and
// 'operators' arrays of names, an unknown schedule, or sizes out of range.
absl::StatusOr<PlanFile> ParsePlanDocument(const nlohmann::json& plan, const Graph& graph, const Topology& topology);

}  // namespace placement::cli

// How a transformer plan's answer is shown: a table for people, JSON for programs (format
// placement.transformer_plan/v1).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

#include "graph/cluster_shape.h"
#include "graph/transformer_spec.h"
#include "policy/parallel/transformer_search.h"
#include "simulator/transformer_plan.h"

namespace placement::cli {

struct TransformerAnswer {
  const TransformerSpec* spec = nullptr;
  const ClusterShape* cluster = nullptr;
  const transformer::TrainingRun* run = nullptr;
  std::string precision;
  const transformer::TransformerPlanResult* result = nullptr;
  const parallel::TransformerSearchResult* search = nullptr;  // null for simulate
  double search_seconds = 0;
  std::vector<std::string> notes;
};

std::string TransformerTable(const TransformerAnswer& answer);
std::string TransformerJson(const TransformerAnswer& answer);
// The chart of one pipeline (client/chart/pipeline_chart.h): its stages' tensor-parallel groups and replicas, the
// passes as Megatron-LM's schedule lays them out from the answer's stage times, one GPU's memory by kind.
absl::StatusOr<std::string> TransformerChartHtml(const TransformerAnswer& answer);

}  // namespace placement::cli

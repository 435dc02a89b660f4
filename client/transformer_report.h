// How a transformer plan's answer is shown: a table for people, JSON for programs (format
// placement.transformer_plan/v1).
#pragma once

#include <string>
#include <vector>

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

}  // namespace placement::cli

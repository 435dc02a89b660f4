// What `placectl train` leaves beside the weights: the manifest (JSON), the learning curve (TSV) and its chart
// (SVG), and the summary it prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/train_command.h"
#include "policy/learned/training_run.h"

namespace placement::cli {

struct GraphFacts {
  std::string hash;
  int32_t operators = 0;
};
using TrainedGraphs = std::map<std::string, GraphFacts>;  // by source

TrainedGraphs DescribeGraphs(const std::vector<learned::RunGraph>& graphs);

struct TrainOutputs {
  std::string weights, manifest, curve_tsv, curve_svg;
};

// OUT's stem with another extension: "runs/policy.pt" -> "runs/policy.json".
std::string BesideWeights(const std::string& weights, const std::string& extension);

absl::StatusOr<TrainOutputs> WriteTrainOutputs(const TrainOptions& options, const learned::TrainingRunOptions& run,
                                               const learned::TrainingRunReport& report, const TrainedGraphs& graphs,
                                               const std::vector<learned::RunTopology>& topologies);

std::string TrainSummary(const learned::TrainingRunReport& report, const TrainOutputs& outputs);

}  // namespace placement::cli

#include "client/convert_commands.h"

#include "absl/strings/str_cat.h"
#include "graph/graph_families.h"
#include "graph/graph_json.h"
#include "graph/training.h"
#include "graph/usage_error.h"

namespace placement::cli {

absl::StatusOr<std::string> RunImport(const std::string& path, const GraphLoadOptions& options,
                                      std::vector<std::string>* warnings) {
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(path, options);
  if (!loaded.ok()) return loaded.status();
  *warnings = loaded->warnings;
  return ProblemToJson(loaded->problem, /*pretty=*/true);
}

absl::StatusOr<std::string> RunGenerate(const GenerateOptions& o) {
  FamilyOptions family;
  family.approx_ops = o.ops;
  family.seed = o.seed;
  family.batch = o.batch;
  family.width = o.width;
  absl::StatusOr<Graph> graph = GenerateFamily(o.family, family);
  // generate reads no file: what it refuses is the command line's FAMILY or flags.
  if (!graph.ok()) return AsUsageError(graph.status());
  if (o.training) {
    absl::StatusOr<Graph> step = BuildTrainingGraph(*graph, TrainingOptions{});
    if (!step.ok()) return step.status();
    graph = *std::move(step);
  }
  GraphJsonOptions json;
  json.pretty = true;
  json.name = absl::StrCat(o.family, " ", o.ops, " seed ", o.seed, o.training ? " training" : "");
  return GraphToJson(*graph, json);
}

}  // namespace placement::cli

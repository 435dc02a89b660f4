#include "client/submit_transformer.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/transformer_report.h"
#include "graph/cluster_shape.h"
#include "graph/transformer_spec.h"
#include "graph/usage_error.h"
#include "policy/parallel/transformer_search.h"
#include "simulator/transformer_plan.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;
using transformer::TransformerPlanResult;

// The plan and its figures as the local search holds them (the plan read back from its text, as the server wrote
// it); bytes come back whole (the wire has them as integers).
absl::StatusOr<TransformerPlanResult> ResultOf(const pb::TransformerPlanAnswer& t) {
  TransformerPlanResult r;
  absl::StatusOr<transformer::TransformerPlan> plan = transformer::ParseTransformerPlan(t.plan());
  if (!plan.ok()) {
    return absl::InternalError(absl::StrCat("the server's plan '", t.plan(), "' does not read: ", plan.status().message()));
  }
  r.plan = *plan;
  r.micro_batches = t.micro_batches();
  r.iteration_seconds = t.iteration_seconds();
  r.samples_per_second = t.samples_per_second();
  r.tokens_per_second = t.tokens_per_second();
  r.mfu = t.mfu();
  r.hfu = t.hfu();
  const pb::TransformerTimeParts& p = t.time();
  r.parts = {.forward = p.forward(),
             .backward = p.backward(),
             .recompute = p.recompute(),
             .tensor_parallel = p.tensor_parallel(),
             .pipeline_send = p.pipeline_send(),
             .pipeline_bubble = p.pipeline_bubble(),
             .data_parallel = p.data_parallel(),
             .optimizer = p.optimizer()};
  const pb::TransformerMemory& m = t.memory();
  r.memory = {.parameters = static_cast<double>(m.parameters()),
              .gradients = static_cast<double>(m.gradients()),
              .optimizer = static_cast<double>(m.optimizer()),
              .activations = static_cast<double>(m.activations()),
              .workspace = static_cast<double>(m.workspace())};
  r.memory_capacity = static_cast<double>(m.capacity());
  r.fits = m.fits();
  for (const pb::TransformerCommunication& c : t.communication()) {
    r.communication.push_back({.kind = c.kind(), .link = c.link(), .bytes = c.bytes(), .seconds = c.seconds()});
  }
  return r;
}

}  // namespace

absl::Status CheckTransformerSubmit(const GraphPayload& payload, const SubmitOptions& o) {
  if (!payload.hf_config) {
    if (o.transformer_plan.empty()) return absl::OkStatus();
    return UsageError(
        absl::StrCat("--plan describes a transformer's layers; ", o.graph_path, " is not a Hugging Face config.json"));
  }
  if (!o.load.training) {
    return UsageError(
        "submit plans a config.json's training step on the server: add --training (`placectl place` "
        "without it places the model's forward graph locally)");
  }
  if (o.load.batch <= 0) {
    return UsageError(
        "a transformer plan needs --batch: the global batch in sequences per iteration (e.g. --batch 512)");
  }
  if (!o.chart_path.empty()) {
    return UsageError(
        "--chart: the server's answer holds no stage times to draw; `placectl place --chart` draws the "
        "plan locally");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TransformerAnswerText(const pb::PlaceResponse& answer, const std::string& config_text,
                                                  const std::string& config_path, const std::string& output) {
  if (!answer.has_transformer()) {
    return absl::InternalError("the server's answer holds no transformer plan (a server older than hf_config?)");
  }
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(config_text, config_path);
  if (!spec.ok()) return spec.status();
  const pb::TransformerPlanAnswer& t = answer.transformer();
  ClusterShape cluster;
  cluster.name = t.cluster();
  cluster.hosts = t.hosts();
  cluster.per_host = t.gpus_per_host();
  cluster.device.kind = t.device_kind();
  transformer::TrainingRun run;
  run.seq = t.seq();
  run.global_batch = t.global_batch();
  absl::StatusOr<TransformerPlanResult> best = ResultOf(t);
  if (!best.ok()) return best.status();
  parallel::TransformerSearchResult search;
  search.best = *best;
  if (t.has_data_parallel()) search.data_parallel = ResultOf(t.data_parallel());
  search.evaluated = t.plans_evaluated();
  search.fitting = t.plans_fitting();
  search.complete = t.search_complete();
  search.reason = t.reason();
  std::vector<std::string> notes(answer.notes().begin(), answer.notes().end());
  notes.insert(notes.end(), answer.warnings().begin(), answer.warnings().end());
  if (answer.cache_hit()) notes.push_back("from the server's cache (the search time is the first answer's)");
  const TransformerAnswer shown{.spec = &*spec,
                                .cluster = &cluster,
                                .run = &run,
                                .precision = t.precision(),
                                .result = &*best,
                                .search = &search,
                                .search_seconds = answer.compute_seconds(),
                                .notes = std::move(notes)};
  return output == "json" ? TransformerJson(shown) : TransformerTable(shown);
}

}  // namespace placement::cli

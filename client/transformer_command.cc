#include "client/transformer_command.h"

#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/chart_file.h"
#include "client/graph_loader.h"
#include "client/place_command.h"
#include "client/transformer_report.h"
#include "graph/topology_json.h"
#include "graph/file_io.h"
#include "graph/onnx/onnx_import.h"
#include "graph/precision.h"
#include "graph/transformer_spec.h"
#include "graph/usage_error.h"
#include "policy/parallel/transformer_search.h"

namespace placement::cli {
namespace {

struct Loaded {
  TransformerSpec spec;
  ClusterShape cluster;
  transformer::TrainingRun run;
  std::vector<std::string> notes;
};

absl::StatusOr<ClusterShape> ClusterOf(const TransformerCommandOptions& o) {
  if (!o.devices.empty() && !o.topology_file.empty()) {
    return UsageError("give the cluster once: --devices or --topology, not both");
  }
  if (!o.devices.empty()) {
    absl::StatusOr<ClusterShape> shape = ParseClusterShape(o.devices);
    if (!shape.ok()) return AsUsageError(absl::InvalidArgumentError(absl::StrCat("--devices: ", shape.status().message())));
    return shape;
  }
  if (o.topology_file.empty()) {
    return UsageError("a config.json describes no cluster: add --devices (e.g. 8xH100, 64x8xDGXA100) or --topology");
  }
  // The file as written: layer-level plans price presets at the datasheet's peaks, which their GEMM efficiency was
  // fitted against (graph/measured_presets.h).
  absl::StatusOr<Topology> topology = LoadTopologyFile(o.topology_file);
  if (!topology.ok()) return topology.status();
  return ClusterShapeOf(*topology);
}

// The transformer an ONNX export holds, as the importer recognizes it (graph/onnx/transformer_recognition.h).
absl::StatusOr<TransformerSpec> RecognizedInOnnx(const std::string& path, int64_t seq, std::vector<std::string>& notes) {
  OnnxImportOptions options;
  if (seq > 0) options.sequence_length = seq;
  absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(path, options);
  if (!imported.ok()) return imported.status();
  if (!imported->transformer.has_value()) {
    return AsUsageError(absl::InvalidArgumentError(absl::StrCat(
        path, " is not recognized as a transformer (BERT, GPT-2 and Llama-style exports are); a layer-level plan "
        "needs one: give its Hugging Face config.json")));
  }
  const TransformerSpec& t = *imported->transformer;
  notes.push_back(absl::StrCat("recognized in the ONNX graph: ", t.model_type, ", ", t.layers, " layers, hidden ",
                               t.hidden, ", ", t.heads, " heads (", t.kv_heads, " key/value), vocabulary ", t.vocab));
  return t;
}

absl::StatusOr<TransformerSpec> SpecOf(const TransformerCommandOptions& o, std::vector<std::string>& notes) {
  absl::StatusOr<std::string> text = ReadWholeFile(o.config_path);
  if (!text.ok()) return text.status();
  if (LooksLikeOnnx(*text)) return RecognizedInOnnx(o.config_path, o.seq, notes);
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(*text, o.config_path);
  // An architecture outside the families read is a bad input file (exit 3), not a failure of ours.
  if (!spec.ok()) return absl::InvalidArgumentError(spec.status().message());
  return spec;
}

absl::StatusOr<Loaded> Load(const TransformerCommandOptions& o) {
  Loaded l;
  absl::StatusOr<TransformerSpec> spec = SpecOf(o, l.notes);
  if (!spec.ok()) return spec.status();
  l.spec = *std::move(spec);
  absl::StatusOr<ClusterShape> cluster = ClusterOf(o);
  if (!cluster.ok()) return cluster.status();
  l.cluster = *std::move(cluster);
  absl::StatusOr<Precision> precision = ParsePrecision(o.precision);
  if (!precision.ok()) return AsUsageError(absl::InvalidArgumentError(absl::StrCat("--precision: ", precision.status().message())));
  if (o.global_batch <= 0) {
    return UsageError("a transformer plan needs --batch: the global batch in sequences per iteration (e.g. --batch 512)");
  }
  l.run = transformer::RunFor(l.spec, o.seq, o.global_batch, *precision, "--seq", "--precision", l.notes);
  return l;
}

absl::StatusOr<std::string> Render(const TransformerCommandOptions& o, const TransformerAnswer& answer) {
  if (!o.chart_path.empty()) {
    absl::StatusOr<std::string> html = TransformerChartHtml(answer);
    if (!html.ok()) return html.status();
    if (absl::Status written = WriteChartFile(o.chart_path, *html); !written.ok()) return written;
  }
  if (o.output == "json") return TransformerJson(answer);
  if (o.output == "table" || o.output.empty()) return TransformerTable(answer);
  return UsageError(absl::StrCat("--output: '", o.output, "' is not one of table, json"));
}

}  // namespace

namespace {

std::string FileHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

bool IsHfConfigFile(const std::string& path) { return IsHfConfigText(FileHead(path)); }

bool IsOnnxFile(const std::string& path) { return LooksLikeOnnx(FileHead(path)); }

absl::StatusOr<std::string> RunTransformerSimulate(const TransformerCommandOptions& o) {
  absl::StatusOr<Loaded> l = Load(o);
  if (!l.ok()) return l.status();
  absl::StatusOr<transformer::TransformerPlan> plan = transformer::ParseTransformerPlan(o.plan);
  if (!plan.ok()) return AsUsageError(absl::InvalidArgumentError(absl::StrCat("--plan: ", plan.status().message())));
  absl::StatusOr<transformer::TransformerPlanResult> result =
      transformer::EvaluateTransformerPlan(l->spec, l->cluster, l->run, *plan);
  if (!result.ok()) {
    if (result.status().code() != absl::StatusCode::kInvalidArgument) return result.status();
    return AsUsageError(absl::InvalidArgumentError(absl::StrCat("--plan: ", result.status().message())));
  }
  if (!result->fits) {
    l->notes.push_back("the plan does not fit: try recompute=selective or full, zero=1..3, sp=1, a smaller mbs, or "
                       "`placectl place` to search for one that fits");
  }
  TransformerAnswer answer{.spec = &l->spec, .cluster = &l->cluster, .run = &l->run, .precision = o.precision,
                           .result = &*result, .notes = l->notes};
  return Render(o, answer);
}

absl::StatusOr<std::string> RunTransformerPlace(const TransformerCommandOptions& o) {
  absl::StatusOr<absl::Duration> deadline = ParseDeadline(o.deadline);
  if (!deadline.ok()) return deadline.status();
  absl::StatusOr<Loaded> l = Load(o);
  if (!l.ok()) return l.status();
  parallel::TransformerSearchOptions search_options;
  search_options.tensor_only = o.parallelism == "tensor";
  if (!o.plan.empty()) {
    absl::StatusOr<transformer::TransformerPlan> fixed =
        transformer::ParseTransformerPlan(o.plan, &search_options.fixed_keys);
    if (!fixed.ok()) return AsUsageError(absl::InvalidArgumentError(absl::StrCat("--plan: ", fixed.status().message())));
    search_options.fixed = *fixed;
  }
  const absl::Time began = absl::Now();
  const absl::Time start = o.started == absl::InfinitePast() ? began : o.started;
  absl::StatusOr<parallel::TransformerSearchResult> search =
      parallel::SearchTransformerPlans(l->spec, l->cluster, l->run, search_options, Budget::For(start + *deadline - began));
  if (!search.ok()) return search.status();
  TransformerAnswer answer{.spec = &l->spec, .cluster = &l->cluster, .run = &l->run, .precision = o.precision,
                           .result = &search->best, .search = &*search,
                           .search_seconds = absl::ToDoubleSeconds(absl::Now() - began), .notes = l->notes};
  return Render(o, answer);
}

}  // namespace placement::cli

#include "server/request_decoder.h"

#include <algorithm>

#include "policy/parallel/hybrid_placer.h"

#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/canonical.h"
#include "graph/costs_input.h"
#include "graph/graph_json.h"
#include "graph/measured_costs.h"
#include "graph/measured_presets.h"
#include "graph/onnx/graph_format.h"
#include "graph/onnx/onnx_import.h"
#include "graph/pipedream.h"
#include "graph/precision.h"
#include "graph/proto/graph_proto.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"
#include "graph/training.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

// Importer errors reach the client with the request field they are about. An unknown name (a device preset,
// a file the topology parser could not find) is the request's fault, hence INVALID_ARGUMENT.
absl::Status InField(absl::string_view field, const absl::Status& s) {
  const absl::StatusCode code = s.code() == absl::StatusCode::kNotFound ? absl::StatusCode::kInvalidArgument : s.code();
  return absl::Status(code, absl::StrCat(field, ": ", s.message()));
}

absl::Status OverLimit(absl::string_view what, int64_t has, int64_t limit, absl::string_view flag) {
  return absl::ResourceExhaustedError(absl::StrCat("the ", what, " has ", has, " ", flag.substr(4),
                                                   "; this server's limit is ", limit, " (--", flag, ")"));
}

absl::Status CheckGraphSize(absl::string_view what, int64_t ops, int64_t edges, const ServerLimits& limits) {
  if (ops > limits.max_operators) return OverLimit(what, ops, limits.max_operators, "max_operators");
  if (edges > limits.max_edges) return OverLimit(what, edges, limits.max_edges, "max_edges");
  return absl::OkStatus();
}

struct Imported {
  Graph graph;
  std::optional<Topology> topology;
  std::string time_unit = "s";
  std::string format;
  int64_t samples_per_run = 1;
  int64_t fixed_batch = 0;
  std::vector<std::string> warnings;
};

// The importer's options a request may set; the server bounds the expanded graph by its operator limit.
absl::StatusOr<OnnxImportOptions> OnnxOptions(const pb::GraphOptions& o, const ServerLimits& limits) {
  OnnxImportOptions options;  // model_dir stays empty: a request may not name files on the server
  if (o.batch_size() > 0) options.batch_size = o.batch_size();
  if (o.sequence_length() > 0) options.sequence_length = o.sequence_length();
  for (const auto& [name, value] : o.dims()) {
    if (value < 0) return absl::InvalidArgumentError(absl::StrCat("options.dims['", name, "'] is negative: ", value));
    options.dims[name] = value;
  }
  options.allow_unresolved_dims = o.allow_unresolved_dims();
  if (o.has_num_data_inputs()) {
    if (o.num_data_inputs() < 0) return absl::InvalidArgumentError("options.num_data_inputs must not be negative");
    options.num_data_inputs = o.num_data_inputs();
  }
  if (o.loop_iterations() < 0 || o.max_unrolled_nodes() < 0) {
    return absl::InvalidArgumentError("options.loop_iterations and options.max_unrolled_nodes must not be negative");
  }
  if (o.loop_iterations() > 0) options.loop_iterations = o.loop_iterations();
  if (o.max_unrolled_nodes() > 0) options.max_unrolled_nodes = o.max_unrolled_nodes();
  options.max_nodes = limits.max_operators;
  return options;
}

bool SetsOnnxOptions(const pb::GraphOptions& o) {
  return o.batch_size() > 0 || o.sequence_length() > 0 || !o.dims().empty() || o.allow_unresolved_dims() ||
         o.has_num_data_inputs() || o.loop_iterations() > 0 || o.max_unrolled_nodes() > 0;
}

absl::StatusOr<Imported> Import(const GraphSource& source, const pb::GraphOptions& o, const ServerLimits& limits) {
  if (o.batch_size() < 0 || o.sequence_length() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("options: batch_size (", o.batch_size(), ") and sequence_length (",
                                                   o.sequence_length(), ") must not be negative"));
  }
  if (SetsOnnxOptions(o) && source.kind != GraphSource::Kind::kOnnx) {
    return absl::InvalidArgumentError(
        "options: batch_size, sequence_length, dims and the other ONNX options apply to ONNX models; this graph has "
        "its costs fixed");
  }
  Imported out;
  switch (source.kind) {
    case GraphSource::Kind::kNone:
      return absl::InvalidArgumentError("no graph: set one of graph, onnx, graph_json or hf_config");
    case GraphSource::Kind::kProto: {
      // Refused before building: the builder's memory grows with what it is given.
      if (absl::Status s = CheckGraphSize("graph", source.graph->operators_size(), source.graph->edges_size(), limits);
          !s.ok()) {
        return s;
      }
      absl::StatusOr<Graph> g = GraphFromProto(*source.graph);
      if (!g.ok()) return InField("graph", g.status());
      out.graph = *std::move(g);
      out.format = "proto";
      return out;
    }
    case GraphSource::Kind::kOnnx: {
      // Bytes that are not ONNX: a text format sent as bytes is read as such; anything else is named.
      const GraphFormat format = DetectGraphFormat(source.bytes);
      if (format == GraphFormat::kUnknown) {
        return absl::InvalidArgumentError(absl::StrCat("onnx: ", UnknownGraphFormatMessage(source.bytes)));
      }
      if (format != GraphFormat::kOnnx)
        return Import(GraphSource{GraphSource::Kind::kJson, nullptr, source.bytes}, o, limits);
      absl::StatusOr<OnnxImportOptions> options = OnnxOptions(o, limits);
      if (!options.ok()) return options.status();
      absl::StatusOr<OnnxImportResult> r = ImportOnnxBytes(source.bytes, *options);
      if (!r.ok()) return InField("onnx", r.status());
      out.graph = std::move(r->problem.graph);
      out.time_unit = r->problem.time_unit;
      out.warnings = std::move(r->warnings);
      out.format = "onnx";
      out.samples_per_run = r->batch;
      out.fixed_batch = r->fixed_batch;
      return out;
    }
    case GraphSource::Kind::kJson: {
      absl::StatusOr<Problem> p;
      if (LooksLikeGraphJson(source.bytes)) {
        p = ParseGraphJson(source.bytes);
        out.format = kGraphJsonFormat;
      } else if (LooksLikeTarnawskiGraph(source.bytes)) {
        p = ParseTarnawskiGraph(source.bytes);
        out.format = "tarnawski";
      } else if (LooksLikePipeDreamProfile(source.bytes)) {
        p = ParsePipeDreamProfile(source.bytes, o.training());
        out.format = "pipedream";
      } else {
        return absl::InvalidArgumentError(absl::StrCat("graph_json: ", UnknownGraphFormatMessage(source.bytes)));
      }
      if (!p.ok()) return InField("graph_json", p.status());
      out.graph = std::move(p->graph);
      out.topology = std::move(p->topology);
      out.time_unit = p->time_unit;
      return out;
    }
  }
  return absl::InternalError("unhandled graph source");
}

// The forward graph in the request's precision, expanded into one training step when it asks for one.
absl::StatusOr<Graph> StepGraph(const Graph& forward, const pb::GraphOptions& o, const ServerLimits& limits) {
  absl::StatusOr<Precision> precision = ParsePrecision(o.precision());
  if (!precision.ok()) return InField("options.precision", precision.status());
  absl::StatusOr<Graph> graph = ApplyPrecision(forward, *precision, /*inference=*/!o.training());
  if (!graph.ok() || !o.training()) return graph;
  TrainingOptions training;
  training.precision = *precision;
  if (!o.optimizer().empty()) {
    absl::StatusOr<Optimizer> optimizer = ParseOptimizer(o.optimizer());
    if (!optimizer.ok()) return InField("options.optimizer", optimizer.status());
    training.optimizer = *optimizer;
  }
  if (o.backward_multiplier() != 0) training.backward_multiplier = o.backward_multiplier();
  const TrainingGraphSize size = TrainingGraphSizeOf(*graph, training);
  if (absl::Status s = CheckGraphSize("training graph", size.ops, size.edges, limits); !s.ok()) return s;
  absl::StatusOr<Graph> step = BuildTrainingGraph(*graph, training);
  if (!step.ok()) return InField("options.training", step.status());
  return step;
}

// The graph a request carries: both requests hold it in the same oneof.
template <typename Request>
GraphSource SourceOfRequest(const Request& r) {
  switch (r.graph_source_case()) {
    case Request::kGraph:
      return {GraphSource::Kind::kProto, &r.graph(), {}};
    case Request::kOnnx:
      return {GraphSource::Kind::kOnnx, nullptr, r.onnx()};
    case Request::kGraphJson:
      return {GraphSource::Kind::kJson, nullptr, r.graph_json()};
    default:
      return {};
  }
}

}  // namespace

absl::StatusOr<Topology> ParseTopology(const pb::Topology& t, std::optional<Precision> precision) {
  absl::StatusOr<Topology> topology;
  if (t.source_case() == pb::Topology::kShorthand) {
    topology = precision.has_value() ? ParseTopologyShorthand(t.shorthand(), *precision)
                                     : ParseTopologyShorthand(t.shorthand());
    if (!topology.ok()) return InField("topology.shorthand", topology.status());
  } else {
    topology = ParseTopologyJson(t.json());
    if (!topology.ok()) return InField("topology.json", topology.status());
    if (precision.has_value()) return WithPresetFigures(*topology, *precision, "topology.json");
  }
  return topology;
}

GraphSource SourceOf(const pb::PlaceRequest& r) { return SourceOfRequest(r); }

GraphSource SourceOf(const pb::SimulateRequest& r) { return SourceOfRequest(r); }

absl::StatusOr<DecodedInput> DecodeInput(const GraphSource& source, const pb::GraphOptions& options,
                                         const pb::Topology* topology, const ServerLimits& limits) {
  absl::StatusOr<Imported> imported = Import(source, options, limits);
  if (!imported.ok()) return imported.status();
  DecodedInput out;
  out.time_unit = imported->time_unit;
  out.format = imported->format;
  out.samples_per_run = imported->samples_per_run;
  out.fixed_batch = imported->fixed_batch;
  out.warnings = std::move(imported->warnings);
  if (absl::Status s = CheckGraphSize("graph", imported->graph.num_ops(), imported->graph.num_edges(), limits);
      !s.ok()) {
    return s;
  }
  std::optional<CostsInput> costs;
  if (!options.costs().empty()) {
    absl::StatusOr<CostsInput> parsed = ParseCostsInput(options.costs(), options.costs_kind());
    if (!parsed.ok()) return InField("options.costs", parsed.status());
    costs = *std::move(parsed);
  }
  std::function<absl::StatusOr<Graph>(const Graph&)> expand;
  // A PipeDream profile times its own backward layers: its importer made the training step already.
  if (imported->format != "pipedream" && (options.training() || !options.precision().empty())) {
    expand = [&](const Graph& forward) { return StepGraph(forward, options, limits); };
  }
  absl::StatusOr<Graph> graph =
      PrepareGraph(std::move(imported->graph), costs ? &*costs : nullptr, expand, &out.cost_sources);
  if (!graph.ok()) return graph.status();
  out.graph = *std::move(graph);
  for (std::string& w : out.cost_sources.warnings) out.warnings.push_back(std::move(w));
  out.cost_sources.warnings.clear();

  absl::StatusOr<Precision> precision = ParsePrecision(options.precision().empty() ? "fp32" : options.precision());
  if (!precision.ok()) return InField("options.precision", precision.status());
  out.precision = std::string(PrecisionName(*precision));
  if (topology != nullptr && topology->source_case() != pb::Topology::SOURCE_NOT_SET) {
    absl::StatusOr<Topology> t = ParseTopology(*topology, *precision);
    if (!t.ok()) return t.status();
    out.topology = *std::move(t);
  } else if (imported->topology.has_value()) {
    absl::StatusOr<Topology> t = WithPresetFigures(*imported->topology, *precision, "the graph");
    if (!t.ok()) return t.status();
    out.topology = *std::move(t);
  } else {
    return absl::InvalidArgumentError(
        "topology: none given and the graph does not describe its devices; set topology.shorthand (e.g. \"4xA100\") "
        "or topology.json");
  }
  if (out.topology.num_devices() > limits.max_devices) {
    return OverLimit("topology", out.topology.num_devices(), limits.max_devices, "max_devices");
  }
  absl::StatusOr<Topology> run = ForRuntime(out.topology, absl::AsciiStrToLower(options.runtime()));
  if (!run.ok()) return InField("options.runtime", run.status());
  out.topology = *std::move(run);
  return out;
}

absl::StatusOr<Objective> ObjectiveFromProto(pb::Objective objective) {
  switch (objective) {
    case pb::OBJECTIVE_STEP_TIME:
      return Objective::kStepTime;
    case pb::OBJECTIVE_THROUGHPUT:
      return Objective::kThroughput;
    case pb::OBJECTIVE_LATENCY:
      return Objective::kLatency;
    default:
      return absl::InvalidArgumentError(absl::StrCat("objective: unknown value ", static_cast<int>(objective)));
  }
}

pb::Objective ObjectiveToProto(Objective objective) {
  switch (objective) {
    case Objective::kThroughput:
      return pb::OBJECTIVE_THROUGHPUT;
    case Objective::kLatency:
      return pb::OBJECTIVE_LATENCY;
    case Objective::kStepTime:
      break;
  }
  return pb::OBJECTIVE_STEP_TIME;
}

absl::StatusOr<SimulatorConfig> SimulatorFromProto(const pb::SimulatorOptions& o) {
  SimulatorConfig config;
  const std::string preset = absl::AsciiStrToLower(o.preset());
  if (preset == "placeto") {
    config = SimulatorConfig::Placeto();
  } else if (!preset.empty() && preset != "default") {
    return absl::InvalidArgumentError(
        absl::StrCat("simulator.preset: '", o.preset(), "' is not one of default, placeto"));
  }
  const std::string priority = absl::AsciiStrToLower(o.priority());
  if (priority == "upward_rank") {
    config.priority = QueuePriority::kUpwardRank;
  } else if (!priority.empty() && priority != "topological") {
    return absl::InvalidArgumentError(
        absl::StrCat("simulator.priority: '", o.priority(), "' is not one of topological, upward_rank"));
  }
  return config;
}

std::string CanonicalGraphOptions(const pb::GraphOptions& o) {
  const std::string optimizer = o.optimizer().empty() ? "adam" : absl::AsciiStrToLower(o.optimizer());
  const double multiplier = o.backward_multiplier() != 0 ? o.backward_multiplier() : 2.0;
  std::string key =
      absl::StrCat("batch=", o.batch_size(), ";seq=", o.sequence_length(), ";training=", o.training() ? 1 : 0,
                   o.training() ? absl::StrCat(";optimizer=", optimizer, ";multiplier=", multiplier) : "");
  // The other ONNX options, only where set: requests without them keep the keys they always had.
  std::map<std::string, int64_t> dims(o.dims().begin(), o.dims().end());
  for (const auto& [name, value] : dims) absl::StrAppend(&key, ";dim:", name.size(), ":", name, "=", value);
  if (o.allow_unresolved_dims()) absl::StrAppend(&key, ";unresolved=1");
  if (o.has_num_data_inputs()) absl::StrAppend(&key, ";data_inputs=", o.num_data_inputs());
  if (o.loop_iterations() > 0) absl::StrAppend(&key, ";loop_iterations=", o.loop_iterations());
  if (o.max_unrolled_nodes() > 0) absl::StrAppend(&key, ";max_unrolled=", o.max_unrolled_nodes());
  if (!o.costs().empty()) absl::StrAppend(&key, ";costs=", Sha256Hex(o.costs()));
  if (!o.costs().empty() && !o.costs_kind().empty() && o.costs_kind() != "*") {
    absl::StrAppend(&key, ";costs_kind=", o.costs_kind().size(), ":", o.costs_kind());
  }
  if (absl::StatusOr<Precision> p = ParsePrecision(o.precision()); !p.ok() || *p != Precision::kFp32) {
    absl::StrAppend(&key, ";precision=", o.precision().size(), ":", absl::AsciiStrToLower(o.precision()));
  }
  if (const std::string runtime = absl::AsciiStrToLower(o.runtime()); !runtime.empty() && runtime != "eager") {
    absl::StrAppend(&key, ";runtime=", runtime.size(), ":", runtime);
  }
  return key;
}

std::string CanonicalSimulator(const pb::SimulatorOptions& o) {
  const std::string preset = o.preset().empty() ? "default" : absl::AsciiStrToLower(o.preset());
  const std::string priority = o.priority().empty() ? "topological" : absl::AsciiStrToLower(o.priority());
  return absl::StrCat("preset=", preset, ";priority=", priority);
}

std::string CanonicalCostModel(CostModelKind cost_model) {
  return cost_model == CostModelKind::kDefault ? "" : std::string(CostModelName(cost_model));
}

std::string CanonicalPlanOptions(const pb::PlaceRequest& r) {
  const std::string parallelism = absl::AsciiStrToLower(r.parallelism());
  const std::string schedule = absl::AsciiStrToLower(r.schedule());
  const std::string sharding = absl::AsciiStrToLower(r.sharding());
  const bool unsharded = sharding.empty() || sharding == "none";
  const std::string recompute = absl::AsciiStrToLower(r.recompute());
  const bool kept = recompute.empty() || recompute == "none";
  // "" is not "operator": a training step on several accelerators left to the service is answered as a plan.
  const bool plain =
      parallelism.empty() && (schedule.empty() || schedule == "1f1b") && r.global_batch() == 0 && unsharded && kept;
  // A config's fixed plan keys as sent: a request spelling them otherwise misses, never gets another plan.
  // The default plan's micro-batch as sent (auto_plan.h; the planned request holds the split it makes instead).
  // Both only where set, so that other requests keep the keys they always had.
  const std::string fixed =
      absl::StrCat(r.transformer_plan().empty()
                       ? ""
                       : absl::StrCat(";transformer_plan=", r.transformer_plan().size(), ":", r.transformer_plan()),
                   r.micro_batch_size() == 0 ? "" : absl::StrCat(";micro_batch_size=", r.micro_batch_size()));
  if (plain) return fixed;
  return absl::StrCat("parallelism=", parallelism.empty() ? "operator" : parallelism,
                      ";schedule=", schedule.empty() ? "1f1b" : schedule, ";global_batch=", r.global_batch(),
                      unsharded ? "" : absl::StrCat(";sharding=", sharding == "fsdp" ? "zero3" : sharding),
                      kept ? "" : absl::StrCat(";recompute=", recompute), fixed);
}

absl::Status SetPlanOptionsFromRequest(const pb::PlaceRequest& r, const std::string& algorithm,
                                       PlacementProblem& problem) {
  if (!r.transformer_plan().empty()) {
    return absl::InvalidArgumentError("transformer_plan: holds a transformer plan's keys; it applies with hf_config");
  }
  absl::Status s = SetPlanOptions(absl::AsciiStrToLower(r.parallelism()), absl::AsciiStrToLower(r.cost_model()),
                                  absl::AsciiStrToLower(r.schedule()), r.global_batch(), algorithm, problem);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("parallelism, cost_model, schedule, global_batch: ", s.message()));
  }
  s = SetPlanMemory(absl::AsciiStrToLower(r.sharding()), absl::AsciiStrToLower(r.recompute()), problem);
  if (s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrCat("sharding, recompute: ", s.message()));
}

void SetCostSources(const CostSources& sources, pb::CostSources* out) {
  out->set_measured_operators(sources.measured_ops);
  out->set_modelled_operators(sources.modelled_ops);
  out->set_measured_flops_share(sources.measured_flops_share);
}

}  // namespace placement::server

// Turns the graph, cluster and options of a request into the graph and topology the placers and the simulator
// take, with every check an untrusted input needs: the importers' own validation (their messages name the
// operator, edge or field, prefixed here with the request field), the server's size limits, and the options.
//
// Codes: INVALID_ARGUMENT for a bad input (including unknown names, such as a device preset), and
// RESOURCE_EXHAUSTED for an input over a limit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/measured_costs.h"
#include "graph/precision.h"
#include "graph/topology.h"
#include "placement/v1/placement.pb.h"
#include "policy/placer.h"
#include "server/limits.h"
#include "simulator/objectives.h"
#include "simulator/simulator.h"

namespace placement::server {

// The graph_source oneof of PlaceRequest and SimulateRequest, whichever message it came in.
struct GraphSource {
  enum class Kind { kNone, kProto, kOnnx, kJson };
  Kind kind = Kind::kNone;
  const placement::v1::Graph* graph = nullptr;  // kProto
  absl::string_view bytes;                      // kOnnx, kJson
};

GraphSource SourceOf(const placement::v1::PlaceRequest& request);
GraphSource SourceOf(const placement::v1::SimulateRequest& request);

// A request's cluster: its shorthand ("8xH100") or JSON; errors name the field.
// A shorthand's devices get the figures for a job at `precision` (graph/measured_presets.h), or the datasheet's
// where none is given (layer-level transformer plans, fitted against datasheet peaks).
absl::StatusOr<Topology> ParseTopology(const placement::v1::Topology& topology,
                                       std::optional<Precision> precision = std::nullopt);

struct DecodedInput {
  Graph graph;  // as placed: imported, then expanded into a training step when asked
  Topology topology;
  std::string time_unit = "s";
  std::string format;                 // "proto", "onnx", "placement.graph/v1" or "tarnawski"
  int64_t samples_per_run = 1;        // the batch an ONNX graph is bound to; 1 (a run is a sample) otherwise
  int64_t fixed_batch = 0;            // an ONNX graph exported with its batch fixed: that batch
  std::vector<std::string> warnings;  // what the importer assumed
  CostSources cost_sources;           // which operators' costs are measured, which modelled
  std::string precision = "fp32";     // options.precision, named (graph/precision.h)
};

// `topology` may be null or unset: the graph input's own devices are used then.
absl::StatusOr<DecodedInput> DecodeInput(const GraphSource& source, const placement::v1::GraphOptions& options,
                                         const placement::v1::Topology* topology, const ServerLimits& limits);

// The answer's record of where its costs came from.
void SetCostSources(const CostSources& sources, placement::v1::CostSources* out);

absl::StatusOr<Objective> ObjectiveFromProto(placement::v1::Objective objective);
placement::v1::Objective ObjectiveToProto(Objective objective);
absl::StatusOr<SimulatorConfig> SimulatorFromProto(const placement::v1::SimulatorOptions& options);

// Canonical one-line forms of the options, for the cache key: equal options give equal strings, defaults
// spelled out ("" and "adam" are the same optimizer).
std::string CanonicalGraphOptions(const placement::v1::GraphOptions& options);
std::string CanonicalSimulator(const placement::v1::SimulatorOptions& options);
// "" for the default cost model (its keys stay what they were before cost models existed), else its name.
std::string CanonicalCostModel(CostModelKind cost_model);
// A plan's options ("" for an operator placement with every plan option at its default), for the cache key.
std::string CanonicalPlanOptions(const placement::v1::PlaceRequest& request);

// The request's plan options set on the problem (policy/parallel/hybrid_placer.h's SetPlanOptions): errors are
// INVALID_ARGUMENT naming the field.
absl::Status SetPlanOptionsFromRequest(const placement::v1::PlaceRequest& request, const std::string& algorithm,
                                       PlacementProblem& problem);

}  // namespace placement::server

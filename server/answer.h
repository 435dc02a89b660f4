// Placements and scores in the wire API's terms: the answer a placer gives becomes a PlaceResponse, a
// SimulateRequest's placement becomes a Placement.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/placement.h"
#include "placement/v1/placement.pb.h"
#include "policy/placer.h"
#include "simulator/memory_breakdown.h"
#include "simulator/objectives.h"

namespace placement::server {

// Objective, value, bound with its parts, ratio, memory fit and, per device, busy time, load, peak memory and what
// it holds by kind (of `placement` of `graph`), capacity and utilization (busy / value).
// Each device's memory by kind: a plan's as the plan model counts it per stage, a placement's from the graph.
std::vector<MemoryBreakdown> AnswerMemory(const PlacerResult& result, const Graph& graph, const Topology& topology);

void FillScore(const Evaluation& evaluation, const std::vector<MemoryBreakdown>& breakdown, const Topology& topology,
               absl::string_view time_unit, placement::v1::Score* score);
void FillScore(const Evaluation& evaluation, const Graph& graph, const Placement& placement, const Topology& topology,
               absl::string_view time_unit, placement::v1::Score* score);

// Assignment (operator order), score, algorithm, proof and notes. The caller adds what is not the placer's:
// graph hash, warnings, policy version, request id, cache flag, timing.
placement::v1::PlaceResponse AnswerFromResult(const PlacerResult& result, const Graph& graph, const Topology& topology,
                                              absl::string_view time_unit);

// The module -> device map of a graph exported from PyTorch (graph/module_map.h); nothing for other graphs.
void FillModules(const Graph& graph, const Placement& placement, const Topology& topology,
                 google::protobuf::RepeatedPtrField<placement::v1::ModulePlacement>* modules);
// A parallel plan's stages (operators in topological order, devices, figures) and its schedule, global batch, cost
// model, step time, simulated time and bottleneck.
void FillPlan(const PlanAnswer& answer, const Graph& graph, const Topology& topology,
              placement::v1::PlaceResponse* out);

// FAILED_PRECONDITION naming the device that is most short of memory, for answers that do not fit.
absl::Status DoesNotFit(const PlacerResult& result, const Topology& topology);

// The request's assignment list (every operator once, by name) or, when it is empty, its placement_json (our
// placement file or a Tarnawski split). Errors name the operator or device.
absl::StatusOr<Placement> PlacementFromRequest(const placement::v1::SimulateRequest& request, const Graph& graph,
                                               const Topology& topology);

}  // namespace placement::server

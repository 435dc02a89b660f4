// Helpers for the heuristic placers' tests: a registry holding only them, runners that check every answer is
// valid and fits, and small graph and topology builders.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "graph/topology.h"
#include "policy/heuristics/heuristic_placers.h"
#include "policy/placer.h"
#include "policy/registry.h"
#include "simulator/tests/test_support.h"

namespace placement::heuristics::testing {

using ::placement::testing::Build;
using ::placement::testing::Costs;
using ::placement::testing::WithMemory;

inline const std::vector<std::string>& PlacerNames() {
  static const std::vector<std::string> names = {"single_device", "round_robin", "hash", "critical_path", "m_topo",
                                                 "m_etf",         "m_sct",       "heft", "scotch",        "metis"};
  return names;
}

inline const PlacerRegistry& Heuristics() {
  static const PlacerRegistry* registry = [] {
    auto* r = new PlacerRegistry;
    RegisterHeuristicPlacers(*r);
    return r;
  }();
  return *registry;
}

inline absl::StatusOr<PlacerResult> RunPlacer(absl::string_view placer, const CostModel& costs, Objective objective,
                                              const Budget& budget = Budget{}) {
  absl::StatusOr<const Placer*> p = Heuristics().Find(placer);
  if (!p.ok()) return p.status();
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = objective;
  return (*p)->Place(problem, budget);
}

// Runs `placer` and checks the answer: valid, scored under the objective, within memory, not below the bound.
inline PlacerResult RunAndCheck(absl::string_view placer, const CostModel& costs, Objective objective) {
  SCOPED_TRACE(std::string(placer) + " / " + std::string(ObjectiveName(objective)));
  absl::StatusOr<PlacerResult> r = RunPlacer(placer, costs, objective);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return PlacerResult{};
  EXPECT_EQ(r->algorithm, placer);
  EXPECT_TRUE(ValidatePlacement(costs, r->placement).ok()) << ValidatePlacement(costs, r->placement);
  EXPECT_TRUE(r->evaluation.fits_memory);
  EXPECT_EQ(r->evaluation.objective, objective);
  EXPECT_GE(r->evaluation.value, r->evaluation.bound.value * (1 - 1e-9));
  return *std::move(r);
}

// Devices of the given kinds and memories, every pair linked at 10 GB/s with 1 us latency.
inline Topology Cluster(const std::vector<std::pair<std::string, int64_t>>& kinds_and_memory) {
  std::vector<Device> devices;
  for (size_t i = 0; i < kinds_and_memory.size(); ++i) {
    devices.push_back(Device{"dev" + std::to_string(i), kinds_and_memory[i].first, DeviceType::kAccelerator, 1e13, 1e12,
                             kinds_and_memory[i].second, 0, 0});
  }
  const size_t n = devices.size();
  absl::StatusOr<Topology> t =
      BuildMatrix("cluster", std::move(devices), std::vector<std::vector<double>>(n, std::vector<double>(n, 1e10)),
                  std::vector<std::vector<double>>(n, std::vector<double>(n, 1e-6)));
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// An operator measured at `seconds` on each listed kind, with one output of `output_bytes`.
inline OpSpec Op(std::string name, std::vector<std::pair<std::string, double>> seconds, int64_t param_bytes = 0,
                 int64_t output_bytes = 0) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = "test";
  op.measured_seconds = std::move(seconds);
  op.param_bytes = param_bytes;
  op.outputs.push_back(OutputTensor{output_bytes, -1});
  return op;
}

}  // namespace placement::heuristics::testing

// Helpers for the Tarnawski placers' tests: problems in their JSON format, and placers run by name.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "graph/tarnawski.h"
#include "policy/placer.h"
#include "policy/registry.h"
#include "policy/tarnawski/instance.h"
#include "policy/tarnawski/tarnawski_placers.h"

namespace placement::tarnawski::testing {

// A parsed input with its cost model, kept together (the cost model points into the problem), and with LoadInstance
// the placers' instance of it.
struct Loaded {
  Problem problem;
  std::unique_ptr<CostModel> costs;
  std::optional<Instance> instance;

  PlacementProblem Latency() const {
    PlacementProblem p;
    p.costs = costs.get();
    p.objective = Objective::kLatency;
    p.cost_model = CostModelKind::kTarnawski;
    return p;
  }
};

inline std::unique_ptr<Loaded> Load(const std::string& json) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(json);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  auto loaded = std::make_unique<Loaded>();
  loaded->problem = *std::move(p);
  absl::StatusOr<CostModel> c = CostModel::Create(loaded->problem.graph, *loaded->problem.topology);
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return nullptr;
  loaded->costs = std::make_unique<CostModel>(*std::move(c));
  return loaded;
}

inline std::unique_ptr<Loaded> LoadInstance(const std::string& json) {
  std::unique_ptr<Loaded> loaded = Load(json);
  if (loaded == nullptr) return nullptr;
  absl::StatusOr<Instance> in = BuildInstance(loaded->Latency());
  EXPECT_TRUE(in.ok()) << in.status();
  if (!in.ok()) return nullptr;
  loaded->instance = *std::move(in);
  return loaded;
}

// A node of their format: {id, fpga, cpu, size}; edges {src, dst, cost} (one cost per source, as theirs).
struct NodeSpec {
  int id;
  double fpga, cpu;
  double size = 0;
  int color = -1;
  bool on_fpga = true;
};
struct EdgeSpec {
  int src, dst;
  double cost;
};

inline std::string Input(const std::vector<NodeSpec>& nodes, const std::vector<EdgeSpec>& edges, int k, double memory,
                         int cpus = 1) {
  nlohmann::json doc;
  doc["maxSizePerFPGA"] = memory;
  doc["maxFPGAs"] = k;
  doc["maxCPUs"] = cpus;
  doc["nodes"] = nlohmann::json::array();
  for (const NodeSpec& n : nodes) {
    nlohmann::json node = {{"id", n.id},          {"supportedOnFpga", n.on_fpga ? 1 : 0},
                           {"cpuLatency", n.cpu}, {"fpgaLatency", n.fpga},
                           {"isBackwardNode", 0}, {"size", n.size}};
    if (n.color >= 0) node["colorClass"] = n.color;
    doc["nodes"].push_back(node);
  }
  doc["edges"] = nlohmann::json::array();
  for (const EdgeSpec& e : edges) doc["edges"].push_back({{"sourceId", e.src}, {"destId", e.dst}, {"cost", e.cost}});
  return doc.dump();
}

inline const PlacerRegistry& TarnawskiPlacers() {
  static const PlacerRegistry* registry = [] {
    auto* r = new PlacerRegistry;
    RegisterTarnawskiPlacers(*r);
    return r;
  }();
  return *registry;
}

inline absl::StatusOr<PlacerResult> RunPlacer(const std::string& placer, const PlacementProblem& problem,
                                              const Budget& budget = {}) {
  absl::StatusOr<const Placer*> p = TarnawskiPlacers().Find(placer);
  if (!p.ok()) return p.status();
  return (*p)->Place(problem, budget);
}

// The device names of a placement, by operator name, for readable expectations.
inline std::string DeviceOf(const Loaded& in, const PlacerResult& r, const std::string& op) {
  return in.problem.topology->device(r.placement.device[in.problem.graph.FindOp(op)]).name;
}

// The best latency over every split their model allows that fits memory (and, when asked, keeps each accelerator
// contiguous), by trying every device for every unit (one CPU stands for all of them).
inline double BestSplitByBruteForce(const Instance& in, bool contiguous_only) {
  std::vector<DeviceId> choices = in.accelerators;
  choices.push_back(in.cpu_of[0]);
  std::vector<DeviceId> split(in.num_units());
  SplitScorer scorer(in);
  double best = std::numeric_limits<double>::infinity();
  int64_t combos = 1;
  for (int32_t u = 0; u < in.num_units(); ++u) combos *= static_cast<int64_t>(choices.size());
  for (int64_t code = 0; code < combos; ++code) {
    int64_t c = code;
    for (int32_t u = 0; u < in.num_units(); ++u, c /= static_cast<int64_t>(choices.size()))
      split[u] = choices[c % choices.size()];
    if (!in.FitsMemory(split)) continue;
    const double v = scorer.Latency(split);
    if (v < best && (!contiguous_only || scorer.Contiguous())) best = v;
  }
  return best;
}

}  // namespace placement::tarnawski::testing

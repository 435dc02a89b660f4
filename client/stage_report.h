// A parallel plan in an answer, for people (a table of stages with their devices and replica counts) and for
// programs (JSON), the same whether the plan came from `placectl place` or from a server (`placectl submit`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/placer.h"
#include "simulator/memory_breakdown.h"

namespace placement::cli {

struct StageRow {
  std::vector<std::string> operators;
  std::vector<std::string> devices;
  std::vector<std::string> modules;  // for graphs exported from PyTorch, in model order
  double compute = 0, allreduce = 0, period = 0;
  std::string allreduce_kind = "none";
  int64_t memory = 0;
  int32_t in_flight = 1, weight_versions = 1;
};

struct PlanSummary {
  std::string schedule = "1f1b";
  std::string sharding = "none";   // what each stage's replicas split
  std::string recompute = "none";  // what the backward recomputes
  int64_t global_batch = 0;      // micro-batches per step; 0: no step (PipeDream's asynchronous rounds)
  int64_t micro_batch_size = 1;  // samples per micro-batch: the batch the graph is bound to (1: one run, a sample)
  std::string cost_model = "default";
  double step_time = 0;
  double simulated_value = 0;  // 0: not simulated
  std::string bottleneck;
  std::vector<StageRow> stages;
  std::vector<MemoryBreakdown> device_memory;  // per device of the topology; empty where not known (a server's)
};

// From a placer's answer (names from the graph and topology).
PlanSummary SummarizePlan(const PlanAnswer& plan, const Graph& graph, const Topology& topology);

// Samples of the global batch per second of step time; 0 without a step.
double SamplesPerSecond(const PlanSummary& plan);

// The "plan" lines and the stage table; times in seconds or the input's own unit.
std::string PlanTable(const PlanSummary& plan, const std::string& time_unit);

// Adds schedule, global_batch (samples), micro_batch_size, micro_batches, samples_per_second (seconds as the time
// unit), cost_model, step_time, simulated_value, bottleneck and stages (each with its
// operators, devices, replicas and figures) to an answer's JSON.
void AddPlanJson(const PlanSummary& plan, nlohmann::ordered_json* out);

}  // namespace placement::cli

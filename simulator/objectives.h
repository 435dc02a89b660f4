// The three objectives a placement is scored by, with their lower bounds.
//
// STEP_TIME: makespan of one simulated step (Placeto, GDP, Baechi). LATENCY: makespan of one sample through an
// inference graph (the same simulation; graphs with backward operators are rejected). THROUGHPUT: time per
// sample of a pipeline, the largest device load, where a device's load is the compute time of its operators
// plus, once per tensor, the transfer time of every tensor it sends to or receives from another device; CPU
// devices pay no transfer (they read host memory), as in Tarnawski et al. (NeurIPS 2020). Memory is a hard
// constraint for all three: for THROUGHPUT a device holds the parameter bytes of its operators.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/simulator.h"

namespace placement {

enum class Objective : uint8_t { kStepTime = 0, kThroughput = 1, kLatency = 2 };

absl::string_view ObjectiveName(Objective o);  // "step_time", "throughput", "latency"
absl::StatusOr<Objective> ParseObjective(absl::string_view name);

// Whose cost model scores a plan: our own (kDefault: the topology's links and resources, all-reduce over them,
// 1F1B's stash in memory; simulator/plan_model.h), or PipeDream's planner's formulas (kPipeDream), so that our
// planner and PipeDream's can be compared on the same numbers.
enum class CostModelKind : uint8_t { kDefault = 0, kPipeDream = 2 };

absl::string_view CostModelName(CostModelKind k);  // "default", "pipedream"
// "" means default; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<CostModelKind> ParseCostModel(absl::string_view name);

struct LowerBound {
  double value = 0;           // seconds (or the input's time unit)
  double critical_path = 0;   // every operator on its fastest device, transfers free
  double work_per_device = 0; // sum of fastest times / devices
  double largest_unit = 0;    // THROUGHPUT: the largest operator or colocation group, on its fastest device
  int32_t min_devices_for_memory = 0;  // devices needed by memory alone (0 when a device is unlimited)
};

LowerBound ComputeLowerBound(const CostModel& costs, Objective objective);

struct DeviceScore {
  double busy = 0;          // compute seconds
  double load = 0;          // THROUGHPUT: compute + transfers; else equal to busy
  int64_t peak_memory = 0;
  int64_t capacity = 0;
  bool oom = false;
};

struct Evaluation {
  Objective objective = Objective::kStepTime;
  double value = 0;
  LowerBound bound;
  double ratio = 0;  // value / bound.value (1 when the bound is 0)
  bool fits_memory = true;
  std::vector<DeviceScore> devices;
  SimulationResult simulation;  // for STEP_TIME and LATENCY
};

// THROUGHPUT load of every device, as defined above. A tensor read on several other devices costs its sender
// once, the slowest of those transfers (with Tarnawski's inputs every transfer of a tensor costs the same).
std::vector<double> DeviceLoads(const CostModel& costs, const Placement& placement);

absl::StatusOr<Evaluation> Evaluate(const CostModel& costs, const Placement& placement, Objective objective,
                                    const SimulatorConfig& config = {});

}  // namespace placement

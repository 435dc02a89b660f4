// The three objectives a placement is scored by, with their lower bounds.
//
// STEP_TIME: makespan of one simulated step (Placeto, GDP, Baechi). LATENCY: makespan of one sample through an
// inference graph (the same simulation; graphs with backward operators are rejected). THROUGHPUT: time per
// sample of a pipeline, the largest device load, where a device's load is the compute time of its operators
// plus, once per tensor, the transfer time of every tensor it sends to or receives from another device; CPU
// devices pay no transfer (they read host memory), as in Tarnawski et al. (NeurIPS 2020). Memory is a hard
// constraint for all three: for THROUGHPUT a device holds the parameter bytes of its operators.
//
// The cost model says how a placement's value is computed. kDefault: as above (the simulator for STEP_TIME and
// LATENCY). kTarnawski: LATENCY as Tarnawski et al. define it (simulator/tarnawski_latency.h): accelerator
// subgraphs run as blocks, CPU operators one by one, transfers paid on block boundaries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/simulator.h"
#include "simulator/tarnawski_latency.h"

namespace placement {

enum class Objective : uint8_t { kStepTime = 0, kThroughput = 1, kLatency = 2 };

absl::string_view ObjectiveName(Objective o);  // "step_time", "throughput", "latency"
absl::StatusOr<Objective> ParseObjective(absl::string_view name);

// How a placement is scored: our own model (kDefault: the simulator, the loads, and for plans
// simulator/plan_model.h), Tarnawski et al.'s latency model (kTarnawski, LATENCY only: accelerator blocks), or
// PipeDream's planner's formulas (kPipeDream, THROUGHPUT only), so that our placers and theirs can be compared
// on the same numbers.
enum class CostModelKind : uint8_t { kDefault = 0, kTarnawski = 1, kPipeDream = 2 };

absl::string_view CostModelName(CostModelKind k);  // "default", "tarnawski", "pipedream"
// "" means default; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<CostModelKind> ParseCostModel(absl::string_view name);
// OK when the cost model scores the objective (tarnawski scores LATENCY, pipedream THROUGHPUT); else
// INVALID_ARGUMENT saying so.
absl::Status CheckCostModel(CostModelKind cost_model, Objective objective);

struct LowerBound {
  double value = 0;                    // seconds (or the input's time unit)
  double critical_path = 0;            // every operator on its fastest device, transfers free
  double work_per_device = 0;          // sum of fastest times / devices
  double largest_unit = 0;             // THROUGHPUT: the largest operator or colocation group, on its fastest device
  int32_t min_devices_for_memory = 0;  // devices needed by memory alone (0 when a device is unlimited)
};

// Under kTarnawski, LATENCY's bound is the critical path alone: CPU operators run concurrently without limit,
// so total work over the devices bounds nothing.
LowerBound ComputeLowerBound(const CostModel& costs, Objective objective,
                             CostModelKind cost_model = CostModelKind::kDefault);

struct DeviceScore {
  double busy = 0;  // compute seconds
  double load = 0;  // THROUGHPUT: compute + transfers; else equal to busy
  int64_t peak_memory = 0;
  int64_t capacity = 0;
  bool oom = false;
};

struct Evaluation {
  Objective objective = Objective::kStepTime;
  CostModelKind cost_model = CostModelKind::kDefault;
  double value = 0;
  LowerBound bound;
  double ratio = 0;  // value / bound.value (1 when the bound is 0)
  bool fits_memory = true;
  std::vector<DeviceScore> devices;
  SimulationResult simulation;       // for STEP_TIME and LATENCY under the default cost model
  std::vector<LatencyBlock> blocks;  // kTarnawski: every accelerator block, in the order they run
};

// THROUGHPUT load of every device, as defined above. A tensor read on several other devices costs its sender
// once, the slowest of those transfers (with Tarnawski's inputs every transfer of a tensor costs the same).
std::vector<double> DeviceLoads(const CostModel& costs, const Placement& placement);

// Under kTarnawski a split that model forbids (the graph contracted by the accelerators' blocks has a cycle) is
// INVALID_ARGUMENT naming the accelerators; one that overflows an accelerator's memory is scored with
// fits_memory false, as under the default model. kPipeDream scores a placement as a plan: EvaluateUnder
// (simulator/plan_model.h) takes every cost model; here it is UNIMPLEMENTED.
absl::StatusOr<Evaluation> Evaluate(const CostModel& costs, const Placement& placement, Objective objective,
                                    const SimulatorConfig& config = {},
                                    CostModelKind cost_model = CostModelKind::kDefault);

}  // namespace placement

// Reads a simulated step back: when each operator ran, and the chain of operators that set the makespan.
//
// The chain is walked backwards from the operator that finished last: an operator that started the moment an
// input arrived continues with that input's producer (the latest arrival wins); one that started the moment its
// device freed up continues with the operator before it on that device. Queueing on a device is therefore
// part of the chain, which is what tells the search that moving work off that device can help.
#pragma once

#include <vector>

#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/simulator.h"

namespace placement::search {

struct StepAnalysis {
  std::vector<double> start;         // per operator
  std::vector<double> end;           // per operator
  std::vector<double> busy;          // per device
  std::vector<OpId> critical;        // the chain, in execution order
  std::vector<uint8_t> on_critical;  // per operator
};

// `simulation` must come from Simulate(costs, placement, config) with config.record_timeline set.
StepAnalysis AnalyzeStep(const CostModel& costs, const Placement& placement, const SimulationResult& simulation,
                         const SimulatorConfig& config);

}  // namespace placement::search

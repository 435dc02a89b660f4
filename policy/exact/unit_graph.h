// Internal to policy/exact: the unit graph the model builder contracts, fuses and reduces before freezing it
// into a PipelineModel. Adjacency is kept as small vectors because the graph is rebuilt a few times.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/cost_model.h"

namespace placement::pipeline_internal {

// Per-operator facts the contraction needs, computed once.
struct OpFacts {
  int32_t num_accelerators = 0;
  int32_t num_cpus = 0;
  std::vector<double> acc_time;       // kCannotRun where the accelerators cannot run the op
  std::vector<double> cpu_time;       // kCannotRun where the CPUs cannot run the op
  std::vector<double> tensor_weight;  // transfer time of each tensor between two devices
};

struct UnitGraph {
  int32_t n = 0;
  std::vector<double> acc_time, cpu_time;
  std::vector<uint8_t> acc_ok, cpu_ok, has_forward;
  std::vector<int64_t> bytes;
  std::vector<std::vector<int32_t>> succs, preds;  // no duplicates, no self-loops
  std::vector<double> hedge_weight;
  std::vector<std::vector<int32_t>> hedges;       // members ascending, at least two
  std::vector<std::vector<int32_t>> unit_hedges;  // hyperedges of each unit
};

// Contracts operators into units by group_of_op (dense ids 0..num_groups-1).
UnitGraph ContractUnits(const CostModel& costs, const OpFacts& facts, const std::vector<int32_t>& group_of_op,
                        int32_t num_groups);

// Units on one cycle of the unit DAG must share a device; returns the strongly connected component of each
// unit (dense ids) and their count through *num_components.
std::vector<int32_t> StronglyConnectedComponents(const UnitGraph& g, int32_t* num_components);

// True when the unit costs nothing on every kind of device the topology has (and can run on all of them).
bool ZeroEverywhere(const UnitGraph& g, const OpFacts& facts, int32_t u);

// One pass of zero-compute merges: target[u] is the unit u merges into, or u. *sized is set when a merged
// unit holds bytes. Units holding bytes are merged only when allow_sized.
std::vector<int32_t> ZeroMergeTargets(const UnitGraph& g, const OpFacts& facts, bool allow_sized, bool* sized);

}  // namespace placement::pipeline_internal

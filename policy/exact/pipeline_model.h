// The contiguous-pipeline problem of Tarnawski et al. (NeurIPS 2020) in the reduced form the exact solver
// works on.
//
// A placement for the THROUGHPUT objective on k identical accelerators and C CPU devices is contiguous when
// the forward operators of every device form the difference J \ I of two down-closed sets (ideals) I ⊆ J of
// the forward DAG, and every other operator sits with its colocation group. The solver therefore works on
// *units*: colocation groups (backward operators included), fused further where contraction would close a
// cycle in the forward DAG (the members of such a cycle share a device in every contiguous placement). Units
// form a DAG through the forward edges; a backward-only unit is ordered by the mirror image of its backward
// edges, as in the publication.
//
// The load of a unit set S on an accelerator is its compute plus, for every tensor whose producer and readers
// are not all inside S but some are, the tensor's transfer time once: each tensor is a weighted hyperedge over
// the units that touch it, and S pays the hyperedges that cross it. This is exactly simulator/objectives'
// DeviceLoads for a homogeneous interconnect. CPU devices pay no transfers.
//
// Two reductions keep the ideal lattice small without changing the optimum:
//  - a unit with zero compute everywhere whose only DAG neighbour is m, and whose every hyperedge contains m,
//    is merged into m: moving it next to m never raises a load and keeps every split contiguous. When the
//    unit holds bytes the merge can only restrict memory use; the model records that (sized_merges) and the
//    solver proves the result against the unmerged model where memory decides.
//  - a unit with zero compute, zero bytes and no weighted hyperedge that is a source (or a sink) of the DAG
//    floats: it leaves the lattice and later joins its earliest successor (latest predecessor), which is
//    always contiguous and costs nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"

namespace placement {

struct PipelineModel {
  // Devices: identical accelerators and identical CPU devices, in topology order.
  std::vector<DeviceId> accelerators;
  std::vector<DeviceId> cpus;
  int64_t accelerator_bytes = 0;  // capacity of one accelerator; 0 = unlimited
  int64_t cpu_bytes = 0;          // capacity of one CPU device; 0 = unlimited

  // Units of the lattice, numbered in a topological order of the unit DAG (predecessors first).
  int32_t num_units = 0;
  std::vector<double> acc_time;  // compute on an accelerator; 0 where !acc_ok
  std::vector<double> cpu_time;  // compute on a CPU; 0 where !cpu_ok
  std::vector<uint8_t> acc_ok;   // every operator of the unit runs on the accelerators
  std::vector<uint8_t> cpu_ok;
  std::vector<int64_t> bytes;              // parameter bytes (the THROUGHPUT memory model)
  std::vector<int32_t> pred_begin, preds;  // CSR over units: direct predecessors
  std::vector<int32_t> succ_begin, succs;  // CSR over units: direct successors

  // Weighted hyperedges over units (only those with weight > 0 and at least two units).
  std::vector<double> hedge_weight;
  std::vector<int32_t> hedge_begin, hedge_members;     // CSR: member units, ascending
  std::vector<int32_t> unit_hedge_begin, unit_hedges;  // CSR: hyperedges of each unit

  // Operators: unit_of_op[op] >= 0 is a lattice unit; -1 - f is floating group f.
  std::vector<int32_t> unit_of_op;
  enum class FloatRule : uint8_t { kWithFirstSuccessor, kWithLastPredecessor, kAnywhere };
  struct Floating {
    FloatRule rule = FloatRule::kAnywhere;
    std::vector<int32_t> neighbors;  // encoded like unit_of_op; each floated later or is a lattice unit
  };
  std::vector<Floating> floating;  // in the order they were floated

  // Facts about the reductions, for the solver and for reports.
  bool sized_merges = false;             // a merged zero-compute unit holds bytes and some device has a memory limit
  int32_t groups = 0;                    // colocation units before fusion and reductions
  int32_t merged_units = 0;              // zero-compute units merged into a neighbour
  std::vector<std::string> group_names;  // per lattice unit: a readable name (first operator's group or name)

  int32_t num_accelerators() const { return static_cast<int32_t>(accelerators.size()); }
  int32_t num_cpus() const { return static_cast<int32_t>(cpus.size()); }
};

struct PipelineModelOptions {
  bool reduce = true;       // apply the two reductions above
  bool merge_sized = true;  // also merge zero-compute units that hold bytes (memory-relaxed, see above)
  // What a hyperedge weighs: the tensor's transfer time on the one interconnect figure (the THROUGHPUT load), or
  // its bytes (then the paths may differ), every tensor's or only those of forward operators (the activations
  // PipeDream's cost model moves).
  enum class Weight : uint8_t { kTransferTime, kBytes, kForwardBytes };
  Weight weight = Weight::kTransferTime;
};

// Fails with UNIMPLEMENTED when the topology is outside the model (accelerators of different kinds or
// capacities, an interconnect whose paths differ while some transfer time is derived from bytes, pinned
// operators), and with FAILED_PRECONDITION when a colocation group can run on no device.
absl::StatusOr<PipelineModel> BuildPipelineModel(const CostModel& costs, const PipelineModelOptions& options = {});

// The chain step of every operator, given the step of every lattice unit: floating units join the step their
// rule names (resolved in reverse floating order, so the neighbours they follow are known); 0 when there is none.
std::vector<int32_t> StepOfOps(const PipelineModel& model, const std::vector<int32_t>& step_of_unit);

}  // namespace placement

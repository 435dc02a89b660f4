// What the simulator knows before its first event: every operator's placed time, priority and memory, and
// the transfers the placement implies, laid out for the event loop.
//
// Internal to the simulator library. The loop touches each operator a few times in an order the graph does
// not predict, so what it needs about one operator sits in one OpPlan, and the lists it walks (inputs to
// release, successors on the same device, transfers to request, readers of a transfer) are flat arrays
// ranged by offsets. Building the plan is linear in the graph; the loop then never hashes, searches or
// allocates per operator.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/simulator.h"

namespace placement {

// One operator; ops[v + 1] closes v's ranges, so the plan has num_ops + 1 of them.
struct OpPlan {
  double time = 0;          // seconds on its device
  double host = 0;          // seconds its device's host thread takes to issue it (CostModel::host_time)
  double priority = 0;      // the larger runs first, ties to the smaller OpId
  int64_t start_bytes = 0;  // allocated at its start: temporary bytes and every output
  int64_t end_bytes = 0;    // freed at its end: temporary bytes and the outputs nobody reads
  DeviceId device = kNone;
  int32_t releases_begin = 0;    // into SchedulePlan::releases
  int32_t successors_begin = 0;  // into SchedulePlan::local_successors
  int32_t transfers_begin = 0;   // into SchedulePlan::transfers
};

// One tensor sent from its producer's device to one other device, however many operators read it there.
// The simulator keeps its state for the transfer in the same record, so that the few times it handles a
// transfer each touch one cache line.
struct alignas(64) Transfer {
  double duration = 0;  // seconds on the wire
  int64_t bytes = 0;
  TensorId tensor = kNone;
  DeviceId from = kNone;
  DeviceId to = kNone;
  int32_t route = 0;          // from * num_devices + to
  int32_t readers_begin = 0;  // the reading operators on `to`: readers[readers_begin .. readers_end)
  int32_t readers_end = 0;
  // Simulation state; with it the record fills one 64-byte cache line.
  int32_t readers_left = 0;  // readers of the received copy not yet finished
  bool started = false;
  double start = 0;
  double end = 0;
};

struct TensorPlan {
  int64_t bytes = 0;
  // Readers on the producer's device plus transfers: the producer's copy is freed when as many of them have
  // finished. 0 means nobody reads the tensor.
  int32_t holders = 0;
};

struct SchedulePlan {
  std::vector<OpPlan> ops;
  std::vector<TensorPlan> tensors;
  std::vector<Transfer> transfers;  // grouped by producer, in OpId order
  // Per operator, one entry per input, released when the operator ends: a TensorId read on the producer's
  // device, or ~transfer for a received copy.
  std::vector<int32_t> releases;
  std::vector<OpId> local_successors;  // per operator: readers of its outputs on its own device, one per edge
  std::vector<OpId> readers;           // per transfer
  int32_t num_routes = 0;
  std::vector<int32_t> transfers_per_route;
};

// The placement must already have passed ValidatePlacement.
SchedulePlan BuildSchedulePlan(const CostModel& costs, const Placement& placement, QueuePriority priority);

}  // namespace placement

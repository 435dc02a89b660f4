// Deterministic discrete-event simulation of one step of a placed graph.
//
// Each device runs one operator at a time from a ready queue ordered by a configurable priority. Where the
// topology gives host overheads (Device::host_op_overhead), the host's thread issues the operators as its devices
// start them, one after another and ahead of the devices: an operator starts no earlier than its issue (one thread
// per host, or per device: SimulatorConfig::host_thread_per_device). A tensor
// needed on another device is sent once per destination device, over the link resources of the topology's
// path; a resource carries one transfer at a time, so transfers sharing a link queue in request order.
// Tensors consumed on their own device are free. Memory per device: parameters resident for the whole step;
// an output from its producer's start until its last consumer on that device has finished and its last
// transfer out has ended (an output nobody reads, until its producer ends); a received copy from its
// transfer's start until its last consumer there has finished; temporary bytes while the operator runs. A
// buffer freed at time t and one allocated at t are never counted together. Everything due at one time
// happens before any device picks its next operator, and ties are broken by OpId and request order, so the
// same input always gives the same schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"

namespace placement {

enum class QueuePriority : uint8_t {
  kTopological = 0,  // smaller position in the graph's topological order first
  kUpwardRank = 1,   // longer remaining path to the end (HEFT's upward rank, on the placed devices) first
  kOpOrder = 2,      // smaller OpId first: the order the graph lists its operators (a plan's micro-batch schedule)
};

struct SimulatorConfig {
  QueuePriority priority = QueuePriority::kTopological;
  double op_gap = 0;        // seconds a device idles after each operator
  double transfer_gap = 0;  // seconds a link resource idles after each transfer
  bool record_timeline = false;
  // Who issues the operators where the topology gives host overheads: one thread per host, shared by its devices
  // (one PyTorch process driving every GPU of its host, as an operator placement runs), or one per device (a
  // process per GPU, as data-parallel replicas and pipeline stages run: the plan simulation sets it).
  bool host_thread_per_device = false;

  // Placeto's published simulator constants (Addanki et al., 2019): 5.7 us after each operator, 25 us after
  // each transfer; pair with PlacetoTopology() for its one outgoing bus per device at 7,600 bytes/us.
  static SimulatorConfig Placeto();
};

struct TimelineEntry {
  enum class Kind : uint8_t { kOp = 0, kTransfer = 1 };
  Kind kind = Kind::kOp;
  int32_t id = 0;       // OpId for an operator, TensorId for a transfer
  DeviceId device = 0;  // where the operator ran, or the sender
  DeviceId peer = -1;   // the receiver of a transfer
  double start = 0;
  double end = 0;
};

// Bytes resident on a device from `time` until its next sample.
struct MemorySample {
  double time = 0;
  int64_t bytes = 0;
};

struct DeviceReport {
  double busy = 0;          // seconds computing
  int64_t peak_memory = 0;  // bytes
  int64_t capacity = 0;     // bytes, 0 = unlimited
  bool oom = false;         // peak_memory > capacity
};

struct SimulationResult {
  double makespan = 0;  // seconds from the first operator's start to the last operator's end
  std::vector<DeviceReport> devices;
  int64_t transfers = 0;
  int64_t bytes_moved = 0;
  bool fits_memory = true;              // no device out of memory
  std::vector<TimelineEntry> timeline;  // when record_timeline: sorted by (start, kind, id, peer)
  // When record_timeline: per device, its bytes resident as a step function. Times strictly increase from 0;
  // a sample's bytes hold from its time (after everything due then) until the next sample's time.
  std::vector<std::vector<MemorySample>> memory;
};

// Placeto's simulated cluster over `devices`: one outgoing bus per device at 7,600 bytes/us, no latency.
absl::StatusOr<Topology> PlacetoTopology(std::vector<Device> devices);

// Simulates one step. The placement must pass ValidatePlacement (checked here; an invalid one is an error),
// and the gaps must be finite and non-negative. Linear in the graph apart from the queues' logarithms: 100k
// operators take tens of milliseconds (docs/BENCHMARKS.md).
absl::StatusOr<SimulationResult> Simulate(const CostModel& costs, const Placement& placement,
                                          const SimulatorConfig& config = {});

}  // namespace placement

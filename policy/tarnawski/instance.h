// Tarnawski et al.'s latency problem (simulator/tarnawski_latency.h) as its placers see it: units (colocation
// groups, their colour classes, or lone operators) placed on accelerators or on a CPU.
//
// A unit on a CPU goes to the CPU device where it is quickest: CPU operators run concurrently without limit in
// this model, so which CPU does not matter otherwise, and host memory is unlimited. Accelerators hold the
// parameter bytes of their units within their capacity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/ilp/units.h"
#include "policy/placer.h"
#include "simulator/tarnawski_latency.h"

namespace placement::tarnawski {

struct Instance {
  const CostModel* costs = nullptr;
  ilp::Units units;
  std::vector<int64_t> bytes;           // per unit: parameter bytes
  std::vector<DeviceId> accelerators;   // the accelerator devices, in index order
  std::vector<DeviceId> cpu_of;         // per unit: its quickest CPU, kNone when no CPU may run it
  std::vector<uint8_t> is_accelerator;  // per device

  const Graph& graph() const { return costs->graph(); }
  int32_t num_units() const { return units.num_units(); }
  // The unit may run on accelerator a and fits it alone.
  bool FitsAccelerator(int32_t u, DeviceId a) const { return units.allowed(u, a) && bytes[u] <= units.capacity[a]; }
  // Parameter bytes per device of a split (one device per unit).
  std::vector<int64_t> Used(absl::Span<const DeviceId> unit_device) const;
  bool FitsMemory(absl::Span<const DeviceId> unit_device) const;
  // "accelerator 'acc0' (600 MiB)" and the like.
  std::string DescribeAccelerator(DeviceId a) const;
};

// Checks the problem (LATENCY under the tarnawski cost model, no backward operators) and builds its units.
// FAILED_PRECONDITION naming the unit, its bytes and the largest accelerator when a unit that no CPU may run
// fits no accelerator.
absl::StatusOr<Instance> BuildInstance(const PlacementProblem& problem);

// Scores splits given per unit (TarnawskiLatency over the operators); one instance per thread.
class SplitScorer {
 public:
  explicit SplitScorer(const Instance& instance);
  // Infinity where the model forbids the split (memory is not checked here).
  double Latency(absl::Span<const DeviceId> unit_device);
  // Whether every accelerator's operators form one contiguous block, after the last Latency call.
  bool Contiguous() const;
  TarnawskiLatency& model() { return model_; }

 private:
  const Instance& instance_;
  TarnawskiLatency model_;
  std::vector<DeviceId> op_device_;
};

// Where an improving placer starts: the best by their model of the problem's start (when it is a contiguous
// split that fits), the greedy split and the interval splits (interval_split.h) of the blocks' depth-first and
// breadth-first orders. The greedy split's error when
// none exists.
absl::StatusOr<std::vector<DeviceId>> StartSplit(const PlacementProblem& problem, const Instance& instance);

// The placer's answer: the split scored by the problem's objective (Evaluate), named `algorithm`.
absl::StatusOr<PlacerResult> Answer(const PlacementProblem& problem, const Instance& instance,
                                    const std::vector<DeviceId>& unit_device, std::string algorithm);

}  // namespace placement::tarnawski

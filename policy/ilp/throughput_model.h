// The THROUGHPUT objective in terms of units, as the MILP sees it, with the starting points it is given.
//
// A device's load is the compute time of its units plus, for every tensor crossing between units, the
// tensor's transfer time once on the sender's device when some reader sits elsewhere and once on each other
// device that reads it; CPU devices pay no transfers. This is DeviceLoads (simulator/objectives.cc) whenever
// a tensor's transfer time does not depend on the pair of devices, as with every profiled input that carries
// measured transfer times. Otherwise the model charges each tensor its slowest transfer between any two
// devices: every load it computes is then at least the true one, and `exact` is false.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "policy/ilp/units.h"
#include "policy/placer.h"

namespace placement::ilp {

struct CrossingTensor {
  int32_t producer = 0;          // unit
  std::vector<int32_t> readers;  // distinct units other than the producer
  double cost = 0;               // transfer time charged to each end
};

struct ThroughputModel {
  const Units* units = nullptr;
  std::vector<int64_t> bytes;                  // per unit: parameter bytes
  std::vector<uint8_t> pays;                   // per device: 1 unless a CPU
  std::vector<CrossingTensor> tensors;         // only tensors that can cross, with a positive cost
  std::vector<std::vector<int32_t>> touching;  // per unit: tensors it produces or reads
  bool exact = true;

  int32_t num_devices() const { return units->num_devices; }
  bool fits(int32_t u, DeviceId d) const { return units->allowed(u, d) && bytes[u] <= units->capacity[d]; }
  std::vector<double> Loads(const std::vector<DeviceId>& unit_device) const;
  double MaxLoad(const std::vector<DeviceId>& unit_device) const;
  bool FitsMemory(const std::vector<DeviceId>& unit_device) const;
};

ThroughputModel BuildThroughputModel(const CostModel& costs, const Units& units);

// The best split of the units, in their order, into one contiguous run per device (devices in index order,
// runs may be empty) that respects kinds and memory; empty when there is none.
std::vector<DeviceId> ContiguousSplit(const ThroughputModel& model);

// Units in order, each to the device (with room) where the largest load so far grows least; empty when
// memory runs out.
std::vector<DeviceId> GreedySplit(const ThroughputModel& model);

// Improves a feasible assignment by moving single units and swapping pairs, with random restarts from the
// best found, until a local optimum survives `rounds` perturbations or `stop` passes. Deterministic for a
// seed when it runs to the end.
std::vector<DeviceId> LocalSearch(const ThroughputModel& model, std::vector<DeviceId> start, uint64_t seed, int rounds,
                                  absl::Time stop);

}  // namespace placement::ilp

// What the network sees: features of each group of operators (coarsen.h), of each device, and of each
// (group, device) pair, all scale-free (logs of ratios to the graph's or cluster's own figures) so that one
// network serves graphs of any size and clusters of any number and mix of devices.
//
// Group (kGroupFeatures): log compute on its fastest device relative to the mean group, its share of the ideal
//   per-device work, log output and parameter bytes relative to the mean, parameters against the smallest
//   device memory, topological depth (0 at the sources, 1 at the deepest), fraction of backward operators,
//   log size, log in- and out-degree, and the transfer time of its outputs relative to its compute; plus an
//   op type bucket (hash of the op type of its heaviest operator) for an embedding.
// Device (kDeviceFeatures): log peak FLOP/s and memory bandwidth relative to the fastest device, memory against
//   the graph's footprint share, log mean bandwidth to the others relative to the best link, log mean latency,
//   CPU flag, position among the devices (so identical devices can still be told apart, as pipeline stages
//   are), 1 / device count.
// Pair (kPairFeatures): log of the group's time on the device over its fastest time (the per-device-kind
//   compute time), whether the device is of its fastest kind, depth minus device position (the pipeline-stage
//   affinity) and its absolute value, parameters over the device's memory.
// Context (kContextFeatures, for iterative decoding over a current placement): share of the group's transfer
//   bytes whose other end is on the device, the device's load against the ideal share, whether the group is
//   there now, whether its parameters would overflow the device.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/cost_model.h"
#include "policy/learned/coarsen.h"

namespace placement::learned {

inline constexpr int kGroupFeatures = 12;
inline constexpr int kDeviceFeatures = 9;
inline constexpr int kPairFeatures = 5;
inline constexpr int kContextFeatures = 4;
inline constexpr int kTypeBuckets = 64;

struct PolicyInput {
  int32_t num_groups = 0;
  int32_t num_devices = 0;
  std::vector<float> group;                 // groups x kGroupFeatures
  std::vector<int64_t> type_bucket;         // groups
  std::vector<float> device;                // devices x kDeviceFeatures
  std::vector<float> pair;                  // groups x devices x kPairFeatures
  std::vector<uint8_t> allowed;             // groups x devices
  std::vector<int64_t> edge_src, edge_dst;  // group edges, as coarsen.h
  // For context features: per-group fastest time, parameter bytes, and per-device capacity (0: unlimited).
  std::vector<double> fastest;
  std::vector<double> params;
  std::vector<double> capacity;
  std::vector<double> edge_bytes;
  double ideal_share = 0;  // total fastest work / devices
  // Edges incident to each group (in and out), as indices into edge_src/edge_dst: CSR.
  std::vector<int32_t> incident_begin;  // groups + 1
  std::vector<int32_t> incident;
};

PolicyInput BuildPolicyInput(const CostModel& costs, const Coarsening& groups);

// groups x devices x kContextFeatures for the placement `group_device` (one device per group).
std::vector<float> ContextFeatures(const PolicyInput& input, const std::vector<int32_t>& group_device);

// Per-device running totals of a placement, which the iterative decoder updates as it moves groups.
struct DeviceTotals {
  std::vector<double> load;    // sum of the fastest times of the groups there
  std::vector<double> params;  // parameter bytes there
};
DeviceTotals Totals(const PolicyInput& input, const std::vector<int32_t>& group_device);

// One group's context rows (devices x kContextFeatures, into `out`) under `group_device` and its totals.
void GroupContext(const PolicyInput& input, int32_t group, const std::vector<int32_t>& group_device,
                  const DeviceTotals& totals, float* out);

}  // namespace placement::learned

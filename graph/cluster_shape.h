// A cluster of identical accelerators in hosts of equal size, reduced to the figures a layer-level plan model
// needs (one device, one host's links), without the per-pair path matrix a Topology builds: planning a model over
// thousands of GPUs costs no more than over eight.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/topology.h"

namespace placement {

// Far beyond any Topology (kMaxTopologyDevices): a shape holds one device, not one per GPU.
inline constexpr int64_t kMaxClusterShapeDevices = 1'000'000;

struct ClusterShape {
  std::string name;
  int64_t hosts = 1;
  int64_t per_host = 1;  // accelerators in each host
  Device device;         // every accelerator
  double intra_bandwidth = 0;    // bytes/s, one accelerator's port to another in its host, per direction
  double intra_latency = 0;      // seconds
  double network_bandwidth = 0;  // bytes/s, one host's interface(s) to the network, per direction
  double network_latency = 0;    // seconds
  int64_t devices() const { return hosts * per_host; }
};

// "HOSTSxCOUNTxPRESET" or "COUNTxPRESET" (one host) of an accelerator preset, up to kMaxClusterShapeDevices.
absl::StatusOr<ClusterShape> ParseClusterShape(absl::string_view text);

// The shape of a topology's accelerators: UNIMPLEMENTED when they differ in kind or figures, or hosts hold
// different numbers of them; FAILED_PRECONDITION for a topology without accelerators. Links are read from the
// paths between the first host's first two accelerators and between the first two hosts.
absl::StatusOr<ClusterShape> ClusterShapeOf(const Topology& topology);

}  // namespace placement

// `placectl memory`: what one step of a model holds on one device, broken down as PyTorch spends it.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"

namespace placement::cli {

struct MemoryOptions {
  std::string graph_path;
  GraphLoadOptions load;     // load.training: a training step; otherwise inference under no_grad
  std::string topology_file;
  std::string devices;       // the device the step runs on is the cluster's first; "" and no file: 1xH100
  std::string output = "table";  // table | json
};

// Parameters, their gradients and the optimizer's state, the activations autograd saves for the backward
// (graph/saved_tensors.h), the largest operator's scratch, and the simulated peak of the step on one device with
// the verdict against its capacity.
absl::StatusOr<std::string> RunMemory(const MemoryOptions& options);

// One step on the cluster's first device and, when it does not fit, what would: the figures RunMemory reports.
struct OneDeviceFit {
  int64_t peak = 0;
  int64_t capacity = 0;  // 0: unlimited
  std::string kind;
  int64_t batch_that_fits = 0;  // when it does not fit: the largest batch that does (0: none found)
  int64_t devices_needed = 0;   // when even one sample does not fit: devices of this capacity it needs at least
};
absl::StatusOr<OneDeviceFit> FitOnOneDevice(const MemoryOptions& options);

}  // namespace placement::cli

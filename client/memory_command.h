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

}  // namespace placement::cli

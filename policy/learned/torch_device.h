// Where the learned policy runs: CUDA when the linked LibTorch has it and a GPU is visible, otherwise the CPU.
// LibTorch stays behind this folder; callers see only strings and absl::Status.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace placement::learned {

struct TorchRuntime {
  std::string device;          // "cuda:0" or "cpu"
  std::string torch_version;   // of the linked LibTorch
  bool cuda_compiled = false;  // whether the linked LibTorch was built with CUDA
};

// Picks the device and proves it works by running a small matrix product on it. `prefer` is "auto", "cpu" or
// "cuda"; asking for "cuda" where there is none is an error, not a silent fall-back.
absl::StatusOr<TorchRuntime> SelectTorchDevice(const std::string& prefer = "auto");

// LibTorch's CPU thread count (intra-op); training and benchmarks pin it so that figures are reproducible.
// INTERNAL when LibTorch cannot size its pool (it reads /proc/cpuinfo, which a sandbox may hide).
absl::Status SetTorchThreads(int threads);

}  // namespace placement::learned

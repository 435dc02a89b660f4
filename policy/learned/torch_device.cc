#include "policy/learned/torch_device.h"

#include <algorithm>

#include <torch/torch.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement::learned {

absl::StatusOr<TorchRuntime> SelectTorchDevice(const std::string& prefer) {
  if (prefer != "auto" && prefer != "cpu" && prefer != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat("device preference '", prefer, "' is not one of auto, cpu, cuda"));
  }
  TorchRuntime rt;
  rt.torch_version = TORCH_VERSION;
  rt.cuda_compiled = torch::cuda::is_available() || at::hasCUDA();
  const bool cuda = torch::cuda::is_available();
  if (prefer == "cuda" && !cuda) {
    return absl::FailedPreconditionError("CUDA was asked for but the linked LibTorch sees no CUDA device");
  }
  const torch::Device device = (prefer != "cpu" && cuda) ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  try {
    // A tiny product on the chosen device: fails here, with a message, rather than on the first request.
    torch::Tensor a = torch::ones({4, 4}, torch::TensorOptions().device(device));
    const double sum = torch::matmul(a, a).sum().item<double>();
    if (sum != 64.0) return absl::InternalError(absl::StrCat("LibTorch self-check on ", device.str(), " gave ", sum));
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("LibTorch failed on ", device.str(), ": ", e.what_without_backtrace()));
  }
  rt.device = device.str();
  return rt;
}

absl::Status SetTorchThreads(int threads) {
  try {
    torch::set_num_threads(std::max(1, threads));
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("LibTorch cannot set its thread count: ", e.what_without_backtrace()));
  }
  return absl::OkStatus();
}

}  // namespace placement::learned

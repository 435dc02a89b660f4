// The policy network in LibTorch (learned_policy.h describes it). Internal to policy/learned: the trainer and
// LearnedPolicy include it, nothing outside this folder does.
#pragma once

#include <string>
#include <utility>

#include <torch/torch.h>

#include "policy/learned/features.h"
#include "policy/learned/learned_policy.h"

namespace placement::learned {

// A PolicyInput as tensors on one device.
struct InputTensors {
  torch::Tensor group, type, device, pair, allowed, src, dst, in_degree, out_degree;
  torch::Tensor src_rows, dst_rows;  // src and dst repeated across the hidden width, for scatter_add_
};
InputTensors ToTensors(const PolicyInput& input, const torch::Device& device, const NetworkOptions& options);

class PolicyNetImpl : public torch::nn::Module {
 public:
  explicit PolicyNetImpl(const NetworkOptions& options);
  // Logits [groups, devices], -1e9 where not allowed.
  torch::Tensor forward(const InputTensors& x);
  // [kContextFeatures]
  torch::Tensor context_weights() const { return context_; }
  const NetworkOptions& options() const { return options_; }

 private:
  NetworkOptions options_;
  torch::nn::Embedding type_embedding_{nullptr};
  torch::nn::Linear encode_{nullptr};
  torch::nn::ModuleList rounds_;
  torch::nn::ModuleList norms_;
  torch::nn::Linear device_in_{nullptr}, device_out_{nullptr};
  torch::nn::Linear query_{nullptr}, key_{nullptr};
  torch::nn::Linear group_to_pair_{nullptr}, device_to_pair_{nullptr};
  torch::nn::Linear pair_hidden_{nullptr}, pair_out_{nullptr};
  torch::Tensor context_;
};
TORCH_MODULE(PolicyNet);

// Mean over groups of the entropy of each group's device distribution, from the logits and their log_softmax
// (both [groups, devices]): the figure both trainers log, and the reinforcement trainer's entropy bonus.
torch::Tensor MeanEntropy(const torch::Tensor& logits, const torch::Tensor& log_probs);

struct LearnedPolicy::Impl {
  explicit Impl(PolicyNet n) : net(std::move(n)) {}
  PolicyNet net;
  torch::Device device = torch::kCPU;
  std::string device_name = "cpu";
  std::string version;
};

}  // namespace placement::learned

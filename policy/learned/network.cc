#include "policy/learned/network.h"

#include <cmath>

namespace placement::learned {
namespace {

constexpr int64_t kTypeDim = 8;
constexpr int64_t kPairDim = 8;
constexpr double kMasked = -1e9;

torch::Tensor Degree(const std::vector<int64_t>& ends, int32_t n) {
  std::vector<float> deg(n, 0);
  for (int64_t v : ends) deg[v] += 1;
  for (float& d : deg) d = d > 0 ? 1 / d : 0;
  return torch::tensor(deg).unsqueeze(1);
}

}  // namespace

InputTensors ToTensors(const PolicyInput& in, const torch::Device& device, const NetworkOptions& options) {
  const int64_t G = in.num_groups, D = in.num_devices;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  InputTensors x;
  // from_blob does not copy: clone() before the PolicyInput may go away.
  x.group = torch::from_blob(const_cast<float*>(in.group.data()), {G, kGroupFeatures}, f32).clone().to(device);
  x.type = torch::from_blob(const_cast<int64_t*>(in.type_bucket.data()), {G}, i64).clone().to(device);
  x.device = torch::from_blob(const_cast<float*>(in.device.data()), {D, kDeviceFeatures}, f32).clone().to(device);
  x.pair = torch::from_blob(const_cast<float*>(in.pair.data()), {G, D, kPairFeatures}, f32).clone().to(device);
  x.allowed =
      torch::from_blob(const_cast<uint8_t*>(in.allowed.data()), {G, D}, torch::TensorOptions().dtype(torch::kUInt8))
          .clone()
          .to(torch::kBool)
          .to(device);
  const int64_t E = static_cast<int64_t>(in.edge_src.size());
  x.src = torch::from_blob(const_cast<int64_t*>(in.edge_src.data()), {E}, i64).clone().to(device);
  x.dst = torch::from_blob(const_cast<int64_t*>(in.edge_dst.data()), {E}, i64).clone().to(device);
  x.src_rows = x.src.unsqueeze(1).expand({E, options.hidden}).contiguous();
  x.dst_rows = x.dst.unsqueeze(1).expand({E, options.hidden}).contiguous();
  x.in_degree = Degree(in.edge_dst, in.num_groups).to(device);   // 1 / in-degree (0 for sources)
  x.out_degree = Degree(in.edge_src, in.num_groups).to(device);  // 1 / out-degree (0 for sinks)
  return x;
}

PolicyNetImpl::PolicyNetImpl(const NetworkOptions& options) : options_(options) {
  const int64_t H = options.hidden;
  type_embedding_ = register_module("type_embedding", torch::nn::Embedding(kTypeBuckets, kTypeDim));
  encode_ = register_module("encode", torch::nn::Linear(kGroupFeatures + kTypeDim, H));
  for (int64_t l = 0; l < options.layers; ++l) {
    rounds_->push_back(torch::nn::Linear(3 * H, H));
    norms_->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({H})));
  }
  register_module("rounds", rounds_);
  register_module("norms", norms_);
  device_in_ = register_module("device_in", torch::nn::Linear(kDeviceFeatures + H, H));
  device_out_ = register_module("device_out", torch::nn::Linear(H, H));
  query_ = register_module("query", torch::nn::Linear(H, H));
  key_ = register_module("key", torch::nn::Linear(H, H));
  group_to_pair_ = register_module("group_to_pair", torch::nn::Linear(H, kPairDim));
  device_to_pair_ = register_module("device_to_pair", torch::nn::Linear(H, kPairDim));
  pair_hidden_ = register_module("pair_hidden", torch::nn::Linear(kPairFeatures + 2 * kPairDim, 32));
  pair_out_ = register_module("pair_out", torch::nn::Linear(32, 1));
  // Starts as a sensible rule (follow the neighbours' bytes, avoid loaded and overflowing devices, mild
  // inertia) that training then tunes.
  context_ = register_parameter("context", torch::tensor({2.0f, -1.0f, 0.5f, -5.0f}));
}

torch::Tensor PolicyNetImpl::forward(const InputTensors& x) {
  const int64_t G = x.group.size(0), D = x.device.size(0), H = options_.hidden;
  torch::Tensor h = torch::relu(encode_->forward(torch::cat({x.group, type_embedding_->forward(x.type)}, 1)));
  for (size_t l = 0; l < rounds_->size(); ++l) {
    // Mean over predecessors (messages along the edges) and over successors (against them) as segment sums.
    // scatter_add_ rather than index_add_: LibTorch 1.13's CPU index_add_ along dim 0 dispatches one add per
    // edge, 100x slower here.
    torch::Tensor from_pred =
        torch::zeros({G, H}, h.options()).scatter_add_(0, x.dst_rows, h.index_select(0, x.src)) * x.in_degree;
    torch::Tensor from_succ =
        torch::zeros({G, H}, h.options()).scatter_add_(0, x.src_rows, h.index_select(0, x.dst)) * x.out_degree;
    torch::Tensor update = rounds_[l]->as<torch::nn::Linear>()->forward(torch::cat({h, from_pred, from_succ}, 1));
    h = norms_[l]->as<torch::nn::LayerNorm>()->forward(h + torch::relu(update));
  }
  torch::Tensor graph = h.mean(0, /*keepdim=*/true).expand({D, H});
  torch::Tensor dev = device_out_->forward(torch::relu(device_in_->forward(torch::cat({x.device, graph}, 1))));
  torch::Tensor attention = query_->forward(h).mm(key_->forward(dev).t()) / std::sqrt(static_cast<double>(H));
  torch::Tensor pg = group_to_pair_->forward(h).unsqueeze(1).expand({G, D, kPairDim});
  torch::Tensor pd = device_to_pair_->forward(dev).unsqueeze(0).expand({G, D, kPairDim});
  torch::Tensor pair =
      pair_out_->forward(torch::relu(pair_hidden_->forward(torch::cat({x.pair, pg, pd}, 2)))).squeeze(2);
  return (attention + pair).masked_fill(x.allowed.logical_not(), kMasked);
}

torch::Tensor MeanEntropy(const torch::Tensor& logits, const torch::Tensor& log_probs) {
  return -(torch::softmax(logits, 1) * log_probs).sum(1).mean();
}

}  // namespace placement::learned

// The learned placement policy: a graph neural network that scores every (group of operators, device) pair,
// loaded from a weights file and run on the device SelectTorchDevice picks. Callers see no LibTorch type:
// inputs are PolicyInput (features.h) and outputs plain arrays, so only this folder links LibTorch.
//
// Network (network.h): an encoder of the group features and an op type embedding; rounds of message passing
// along the DAG in both directions (the mean of the predecessors' and of the successors' states, GraphSAGE
// style, as Placeto's forward and backward passes); a device encoder that also sees the graph's mean state;
// then attention (group query x device key) plus a small network over the pair features gives the logits. A
// linear head over context features (features.h) adds what the current placement says, which is what
// iterative decoding uses; single-shot decoding uses the logits alone.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/learned/features.h"

namespace placement::learned {

struct NetworkOptions {
  int64_t hidden = 64;
  int64_t layers = 3;
};

struct PolicyScores {
  int32_t groups = 0;
  int32_t devices = 0;
  std::vector<float> logits;  // groups x devices; a large negative number where the group may not go
  std::array<float, kContextFeatures> context_weights{};  // logit += context . weights when decoding iteratively
};

class LearnedPolicy {
 public:
  struct Impl;  // LibTorch inside (network.h)

  // NOT_FOUND when the file is missing, DATA_LOSS when it is not a weights file of this network (truncated,
  // corrupt, another format), FAILED_PRECONDITION when the device cannot be used. `device` as SelectTorchDevice.
  static absl::StatusOr<std::shared_ptr<const LearnedPolicy>> Load(const std::string& path,
                                                                   const std::string& device = "auto");
  // The same, writable: training goes on from these weights (the version becomes the one Save is given).
  static absl::StatusOr<std::shared_ptr<LearnedPolicy>> LoadForTraining(const std::string& path,
                                                                        const std::string& device = "cpu");
  // A fresh network with weights drawn from `seed` (for training), on the CPU.
  static std::shared_ptr<LearnedPolicy> Create(const NetworkOptions& options, uint64_t seed);

  explicit LearnedPolicy(std::unique_ptr<Impl> impl);
  ~LearnedPolicy();

  // A writable copy of these weights on the same device, named `version` (fine-tuning trains it; this policy
  // and every placer that shares it never change).
  absl::StatusOr<std::shared_ptr<LearnedPolicy>> CopyForTraining(const std::string& version) const;

  // Writes the weights with the version string inside.
  absl::Status Save(const std::string& path, const std::string& version) const;

  // The version stored in the file plus a hash of the file's bytes ("gnn-3+3f2a9c01"): it names exactly these
  // weights, which is what the answer cache keys on.
  const std::string& version() const;
  const std::string& device() const;  // "cpu" or "cuda:0"

  // Thread-safe; INTERNAL with LibTorch's message when the network fails.
  absl::StatusOr<PolicyScores> Score(const PolicyInput& input) const;

  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace placement::learned

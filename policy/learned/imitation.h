// Imitation before reinforcement: the policy first learns to reproduce good placements of its training graphs,
// then REINFORCE (trainer.h) tunes it against the simulator. Reinforcement from random weights on 2 CPU cores
// spends most of an hour discovering what a list scheduler and a local search already know (balance the work,
// keep heavy edges on one device, pipeline by depth); cross-entropy against such placements teaches it in
// minutes, and the reward then corrects where imitation and the objective disagree.
//
// Teacher: local search (policy/search) from the best of heft and m_topo with a move limit and no deadline,
// so the demonstrations depend only on the instance and the seed. Its placement becomes one device per group
// (the device holding most of the group's fastest-device work), with identical devices renamed in order of first
// use along the topological order of the groups (so "the first device used" always has the same name, as a
// pipeline's first stage does), kept only where the simulator gives the renamed placement the same step time.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/trainer.h"

namespace placement::learned {

struct Demonstration {
  std::vector<int32_t> group_device;  // per group of the instance's coarsening
  double ratio = 0;                   // its step time / lower bound (OOM counted with the trainer's penalty)
};

struct TeacherOptions {
  std::string placer = "local_search";  // or any placer of DefaultPlacerRegistry() that needs no deadline
  int64_t max_moves = 1500;             // local search moves per instance
  uint64_t seed = 1;
};

// One demonstration per instance, in the instances' order.
absl::StatusOr<std::vector<Demonstration>> MakeDemonstrations(const std::vector<const Instance*>& instances,
                                                              const TeacherOptions& options,
                                                              std::ostream* log = nullptr);

// Renames identical devices of `group_device` in order of first use (see above); returns the input unchanged
// when no renaming keeps the simulated step time.
std::vector<int32_t> CanonicalDeviceNames(const Instance& x, const std::vector<int32_t>& group_device);

struct ImitationOptions {
  uint64_t seed = 1;
  int64_t iterations = 2000;
  int32_t graphs_per_batch = 4;
  double learning_rate = 2e-3;
  double max_grad_norm = 1.0;
  double oom_penalty = 2.0;  // for the validation ratio, as in TrainerOptions
  int64_t eval_every = 100;
  std::string checkpoint;  // best validation weights (empty: not saved)
  std::string version = "gnn";
};

// Cross-entropy of the network's logits against the demonstrations, mean over groups. Curve points carry the
// loss, the entropy and the greedy validation ratio (sample_ratio: the demonstrations' mean ratio). The best
// validation ratio reached is returned in *best (for the reinforcement phase to beat).
absl::StatusOr<std::vector<CurvePoint>> Imitate(LearnedPolicy& policy, const std::vector<const Instance*>& train,
                                                const std::vector<Demonstration>& demonstrations,
                                                const std::vector<const Instance*>& validation,
                                                const ImitationOptions& options, double* best,
                                                std::ostream* log = nullptr);

}  // namespace placement::learned

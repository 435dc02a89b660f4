// The learned placers, registered next to the classical families when a policy is loaded:
//   policy            single shot (GDP): coarsen, one forward pass, the best device per group (greedy), a few
//                     placements sampled from the same scores, the guided decodings (decode.h: HEFT among the
//                     devices the network rates close to its best) and the scheduled ones (scheduled.h: HEFT's
//                     list scheduler taking each unit's device from the logits less weighted delays), the best
//                     under the simulator
//   policy_iterative  from the single-shot answer, sweeps operator group by group in topological order over the
//                     current placement (Placeto), keeping the best simulated sweep
//   policy_search     the single-shot answer improved by local search for the rest of the budget
//   policy_finetune   the network fine-tuned on the request's own graph for the budget, on a private copy of the
//                     weights (finetune_placer.h)
// Each repairs memory the way local search does when its answer overflows a device, and names the policy
// version in its notes.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "policy/learned/coarsen.h"
#include "policy/learned/learned_placer_info.h"
#include "policy/learned/learned_policy.h"
#include "policy/placer.h"
#include "policy/registry.h"

namespace placement::learned {

// policy_finetune: reinforcement on the one graph, as train_policy's scheduled training (trainer.h).
struct FinetuneOptions {
  absl::Duration budget_without_deadline = absl::Seconds(10);  // the tuning time when the request sets no deadline
  double learning_rate = 1e-3;
  double entropy_bonus = 0.005;
  int32_t graphs_per_batch = 2;  // the one graph, sampled this many times per iteration
  int32_t samples_per_graph = 8;
  double schedule_weight = 4;  // the weight the shipped network was trained at
};

struct LearnedPlacerOptions {
  CoarseningOptions coarsening;
  int samples = 16;  // sampled placements besides the greedy one (a quarter of them past many_ops)
  int32_t many_ops = 20000;
  int sweeps = 3;  // policy_iterative
  // Guided decodings, one per threshold: each group may use the devices whose probability is at least this
  // share of its best one's (decode.h). Past many_ops only the first quarter (at least one) run. Empty: none.
  std::vector<double> guided_thresholds = {0.5, 0.1, 0.01, 0.001};
  // Sampled guided decodings (decode.h SampleGroupCandidates at guided_sample_threshold), each one HEFT
  // schedule, a quarter of them past many_ops. Off by default: 8 of them changed 2 of 12 evaluation answers by
  // 0.5% and doubled the placer's time (docs/BENCHMARKS.md).
  int guided_samples = 0;
  double guided_sample_threshold = 0.01;
  // Scheduled decodings (scheduled.h), greedy, one per weight of the schedule's delays against the logits: the
  // weight the shipped network was trained at first (4, models/MANIFEST.json), then around it, the larger ones
  // closer to HEFT. Past many_ops only the first quarter (at least one) run. Empty: none.
  std::vector<double> scheduled_weights = {4, 2, 8, 16, 32};
  // Sampled scheduled decodings at the first weight (scheduled.h with the placer's seeded generator: the
  // distribution the network was trained on); none past many_ops. 0: none.
  int scheduled_samples = 8;
  FinetuneOptions finetune;
  bool register_finetune = true;  // RegisterLearnedPlacers adds policy_finetune (AUTO then runs it when time is left)
};

void RegisterLearnedPlacers(PlacerRegistry& registry, std::shared_ptr<const LearnedPolicy> policy,
                            const LearnedPlacerOptions& options = {});

// The single-shot placer ("policy") alone, on `policy`.
std::unique_ptr<Placer> MakePolicyPlacer(std::shared_ptr<const LearnedPolicy> policy,
                                         const LearnedPlacerOptions& options = {});

// The classical families, the learned placers, and AUTO over all of them.
std::unique_ptr<PlacerRegistry> MakeRegistryWithPolicy(std::shared_ptr<const LearnedPolicy> policy,
                                                       const LearnedPlacerOptions& options = {});

// What the single-shot placer does, for the evaluation tools: group devices before any repair.
struct PolicyAnswer {
  Coarsening groups;
  PolicyInput input;
  PolicyScores scores;
  std::vector<int32_t> group_device;
};
absl::StatusOr<PolicyAnswer> RunPolicy(const LearnedPolicy& policy, const CostModel& costs,
                                       const CoarseningOptions& coarsening = {});

}  // namespace placement::learned

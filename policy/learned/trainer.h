// Reinforcement learning of the policy against the simulator: REINFORCE with a per-graph baseline (the mean
// reward of the other samples of the same graph, as in GDP), an entropy bonus and gradient-norm clipping.
//
// Each iteration takes a batch of instances; for each it samples placements from the network, simulates each,
// and scores it reward = -(step time / lower bound), minus oom_penalty when a device overflows. A share of the
// samples train iterative decoding: a single-shot sample is the current placement, the context features of
// that placement adjust the logits, and a second placement is sampled from them.
//
// Reproducible: the same seed, data and options give the same weights (single-threaded sampling; LibTorch's
// CPU kernels with a fixed thread count are deterministic for these ops).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/placement.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_policy.h"

namespace placement::learned {

// The best placement the samples of a run found (fine-tuning answers with it): its cost as PlacementCost counts
// (step time / bound, plus the penalty when it overflows memory), and the operator placement.
struct BestSample {
  double cost = std::numeric_limits<double>::infinity();
  Placement placement;
  int64_t iteration = 0;  // the iteration that drew it
};

// Where a run stands, after every iteration.
struct TrainerProgress {
  int64_t iteration = 0;  // iterations done
  double seconds = 0;
  double fraction = 0;          // of the run's limit (iterations or time, whichever is nearer)
  double start_validation = 0;  // the first curve point's validation ratio
  double best_validation = 0;   // the best so far (what the checkpoint holds)
  double last_validation = 0;   // the latest point's
};

struct TrainerOptions {
  uint64_t seed = 1;
  int64_t iterations = 2000;
  double max_seconds = 0;  // 0: no limit; else stop after this much wall time
  // Stop after this many iterations (0: at `iterations`) without changing the schedules, which follow
  // `iterations`: a run cut short this way is the same run as the first stop_after iterations of the full one.
  int64_t stop_after = 0;
  int32_t graphs_per_batch = 4;
  int32_t samples_per_graph = 8;
  double learning_rate = 2e-3;
  double entropy_bonus = 0.002;  // decays linearly to a tenth over the run
  double max_grad_norm = 1.0;
  double oom_penalty = 2.0;
  double iterative_share = 0.25;  // share of the batch's graphs that train iterative decoding
  // Share of the batch's graphs that train the network as HEFT's guide (decode.h): for each group, every device
  // but the best is left open with probability sigmoid(logit - best logit - log(guide_threshold)), so the most
  // likely candidate set is exactly the guided decoding at that threshold; HEFT schedules among the sampled
  // candidates and the simulated step time is the reward. 0 draws nothing (the random sequence of runs without it).
  double guide_share = 0;
  double guide_threshold = 0.1;
  // Share of the batch's graphs that train the network for the scheduled decoding (scheduled.h): HEFT's list
  // scheduler samples each unit's device from softmax(logit - schedule_weight * delay / time scale), the
  // simulated step time is the reward. With it, checkpoints keep the best validation ratio of the better of
  // greedy and the greedy scheduled decoding. 0 draws nothing (the random sequence of runs without it).
  double scheduled_share = 0;
  double schedule_weight = 2;
  int64_t eval_every = 25;  // iterations between validation (greedy single shot) and curve points
  std::string checkpoint;   // path; the best validation weights are saved here (empty: not saved)
  // Only validation ratios below this one are checkpointed (what an earlier phase already saved).
  double checkpoint_to_beat = std::numeric_limits<double>::infinity();
  std::string version = "gnn";  // stored with the checkpoint
  // Set from outside (a signal): the run ends after the iteration in progress, as at its limit; the checkpoint
  // keeps the best validation weights so far. May be null.
  const std::atomic<bool>* stop = nullptr;
  // With max_seconds: the entropy bonus decays over the share of the time spent when that is ahead of the share
  // of iterations, so that a run bounded by time anneals within it (off: the schedule follows iterations alone,
  // as every run made before the option existed).
  bool schedule_by_time = false;
  // When set, the best placement any sample draws (scheduled, guided or single-shot) is kept here.
  BestSample* best_sample = nullptr;
  // Called after every iteration (may be empty): progress bars.
  std::function<void(const TrainerProgress&)> on_iteration;
};

struct CurvePoint {
  int64_t iteration = 0;
  double seconds = 0;
  double loss = 0;     // mean over the iterations since the last point
  double entropy = 0;  // mean per-group entropy (nats)
  double sample_ratio =
      0;  // mean step time / lower bound of the sampled placements (OOM ones counted with the penalty)
  double greedy_ratio = 0;  // the same for greedy single shot on the validation set
};

// Trains `policy` in place. Calls `on_point` with each curve point as it is made (may be null).
absl::StatusOr<std::vector<CurvePoint>> Train(LearnedPolicy& policy, const std::vector<const Instance*>& train,
                                              const std::vector<const Instance*>& validation,
                                              const TrainerOptions& options, std::ostream* log = nullptr);

// Step time / lower bound of a group placement, plus oom_penalty when it overflows memory.
double PlacementCost(const Instance& x, const std::vector<int32_t>& group_device, double oom_penalty);

// Mean greedy single-shot step time / lower bound over the instances (OOM answers count as ratio + penalty).
// guide_threshold > 0: per instance the better of that and the guided decoding at the threshold.
// schedule_weight > 0: per instance the better of that and the greedy scheduled decoding at the weight.
double GreedyRatio(const LearnedPolicy& policy, const std::vector<const Instance*>& instances, double oom_penalty,
                   double guide_threshold = 0, double schedule_weight = 0);

}  // namespace placement::learned

// The learning curve and checkpoints of a training phase (imitation.h, trainer.h): losses and entropies summed
// per iteration, a curve point every few iterations with the greedy validation ratio, a log line, and the weights
// saved whenever that ratio is the best so far.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/trainer.h"

namespace placement::learned {

struct CurveOptions {
  double oom_penalty = 2.0;
  std::string checkpoint;  // empty: not saved
  std::string version;
  // Only validation ratios below this are saved (an earlier phase's best).
  double to_beat = std::numeric_limits<double>::infinity();
  std::string label;           // starts each log line ("iter", "imitate")
  std::string loss_name;       // how the log names the loss
  int64_t eval_every = 25;     // iterations between points
  double guide_threshold = 0;  // > 0: the validation ratio takes the better of greedy and this guided decoding
  double schedule_weight = 0;  // > 0: ... and the greedy scheduled decoding at this weight
  // > 0: every point's sample ratio (imitation: the demonstrations' mean); else the mean of those added.
  double fixed_sample_ratio = 0;
};

class CurveRecorder {
 public:
  CurveRecorder(LearnedPolicy& policy, const std::vector<const Instance*>& validation, CurveOptions options,
                std::ostream* log);

  // Records an iteration that has just finished (`done` iterations so far): its loss and entropy, and the sum and
  // count of the sample ratios it saw; makes a point when `done` is a multiple of eval_every.
  absl::Status EndIteration(int64_t done, double loss, double entropy, double ratio_sum = 0, int64_t ratio_count = 0);
  // A point at `iteration` (loss, entropy and sample ratio the means since the last point); saves the weights
  // when the validation ratio is the best so far.
  absl::Status Point(int64_t iteration);
  bool HasPending() const { return since_ > 0; }

  double best() const { return best_; }
  std::vector<CurvePoint>& curve() { return curve_; }

 private:
  LearnedPolicy& policy_;
  const std::vector<const Instance*>& validation_;
  CurveOptions options_;
  std::ostream* log_;
  absl::Time start_;
  double best_;
  double loss_sum_ = 0, entropy_sum_ = 0, ratio_sum_ = 0;
  int64_t since_ = 0, ratio_count_ = 0;
  std::vector<CurvePoint> curve_;
};

}  // namespace placement::learned

#include "policy/learned/curve_recorder.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace placement::learned {

CurveRecorder::CurveRecorder(LearnedPolicy& policy, const std::vector<const Instance*>& validation,
                             CurveOptions options, std::ostream* log)
    : policy_(policy),
      validation_(validation),
      options_(std::move(options)),
      log_(log),
      start_(absl::Now()),
      best_(options_.to_beat) {}

absl::Status CurveRecorder::EndIteration(int64_t done, double loss, double entropy, double ratio_sum,
                                         int64_t ratio_count) {
  loss_sum_ += loss;
  entropy_sum_ += entropy;
  ++since_;
  ratio_sum_ += ratio_sum;
  ratio_count_ += ratio_count;
  return done % options_.eval_every == 0 ? Point(done) : absl::OkStatus();
}

absl::Status CurveRecorder::Point(int64_t iteration) {
  CurvePoint p;
  p.iteration = iteration;
  p.seconds = absl::ToDoubleSeconds(absl::Now() - start_);
  p.loss = since_ > 0 ? loss_sum_ / since_ : 0;
  p.entropy = since_ > 0 ? entropy_sum_ / since_ : 0;
  p.sample_ratio = options_.fixed_sample_ratio > 0 ? options_.fixed_sample_ratio
                   : ratio_count_ > 0              ? ratio_sum_ / ratio_count_
                                                   : 0;
  p.greedy_ratio =
      GreedyRatio(policy_, validation_, options_.oom_penalty, options_.guide_threshold, options_.schedule_weight);
  loss_sum_ = entropy_sum_ = ratio_sum_ = 0;
  since_ = ratio_count_ = 0;
  curve_.push_back(p);
  if (log_ != nullptr) {
    *log_ << absl::StrFormat("%s %6d  %7.1fs  %s %+.4f  entropy %.3f  sampled %.3f  greedy(val) %.4f\n", options_.label,
                             p.iteration, p.seconds, options_.loss_name, p.loss, p.entropy, p.sample_ratio,
                             p.greedy_ratio)
          << std::flush;
  }
  if (p.greedy_ratio < best_) {
    best_ = p.greedy_ratio;
    if (!options_.checkpoint.empty()) return policy_.Save(options_.checkpoint, options_.version);
  }
  return absl::OkStatus();
}

}  // namespace placement::learned

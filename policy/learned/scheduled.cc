#include "policy/learned/scheduled.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/learned/decode.h"

namespace placement::learned {

double ScheduleTimeScale(const Coarsening& groups, int32_t devices) {
  if (groups.num_groups == 0 || devices == 0) return 1;
  double total = 0;
  for (int32_t g = 0; g < groups.num_groups; ++g) {
    const double* row = &groups.time[static_cast<size_t>(g) * devices];
    const double fastest = *std::min_element(row, row + devices);
    if (fastest < kCannotRun) total += fastest;
  }
  const double mean = total / groups.num_groups;
  return mean > 0 ? mean : 1;
}

heuristics::DeviceChooser ScheduledChooser(const PolicyScores& scores, const Coarsening& groups, double weight,
                                           double time_scale, std::mt19937_64* rng, ScheduledTrace* trace) {
  const double per_second = weight / time_scale;
  return [&scores, &groups, per_second, rng, trace](int32_t, OpId op, absl::Span<const DeviceId> devices,
                                                    absl::Span<const double> finish) -> size_t {
    const int32_t g = groups.group_of_op[op];
    const int32_t nd = scores.devices;
    const float* logits = &scores.logits[static_cast<size_t>(g) * nd];
    const double earliest = *std::min_element(finish.begin(), finish.end());
    // Penalties are capped where the softmax no longer sees them, which keeps the trace's floats finite.
    thread_local std::vector<double> penalty, score;
    penalty.resize(devices.size());
    score.resize(devices.size());
    size_t best = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
      penalty[i] = std::min(per_second * (finish[i] - earliest), 60.0);
      score[i] = logits[devices[i]] - penalty[i];
      if (score[i] > score[best] || (score[i] == score[best] && finish[i] < finish[best])) best = i;
    }
    const size_t pick =
        rng == nullptr ? best : static_cast<size_t>(Choose(score.data(), static_cast<int32_t>(devices.size()), rng));
    if (trace != nullptr) {
      trace->group.push_back(g);
      trace->choice.push_back(devices[pick]);
      const size_t at = trace->penalty.size();
      trace->penalty.resize(at + nd, ScheduledTrace::kNotOffered);
      for (size_t i = 0; i < devices.size(); ++i) trace->penalty[at + devices[i]] = static_cast<float>(penalty[i]);
    }
    return pick;
  };
}

}  // namespace placement::learned

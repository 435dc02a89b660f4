#include "simulator/pipeline_schedule.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

constexpr int64_t kMaxPasses = 4'000'000;

struct Shape {
  int32_t p = 1;  // devices
  int32_t v = 1;  // chunks per device
  int64_t m = 1;  // micro-batches
};

// The k-th forward (or backward) pass a device runs, as Megatron-LM's interleaved schedule numbers them: micro-batches
// in groups of p, each group through chunk 0, 1, ... (backward: the last chunk first).
void PassOf(const Shape& x, int64_t k, bool backward, int32_t* chunk, int32_t* micro) {
  const int64_t group = k / (static_cast<int64_t>(x.p) * x.v);
  int32_t c = static_cast<int32_t>((k / x.p) % x.v);
  if (backward) c = x.v - 1 - c;
  *chunk = c;
  *micro = static_cast<int32_t>(group * x.p + k % x.p);
}

// Each device's passes in order: warm-up forwards, alternating forward and backward, cool-down backwards.
std::vector<std::vector<PipelinePass>> DeviceOrders(const Shape& x) {
  const int64_t total = x.m * x.v;
  std::vector<std::vector<PipelinePass>> orders(x.p);
  for (int32_t d = 0; d < x.p; ++d) {
    const int64_t warmup = std::min<int64_t>(
        total, x.v == 1 ? x.p - d - 1 : static_cast<int64_t>(x.p - d - 1) * 2 + static_cast<int64_t>(x.v - 1) * x.p);
    int64_t forwards = 0, backwards = 0;
    const auto add = [&](bool backward) {
      PipelinePass pass{.device = d, .backward = backward};
      PassOf(x, backward ? backwards++ : forwards++, backward, &pass.chunk, &pass.micro_batch);
      orders[d].push_back(pass);
    };
    for (int64_t i = 0; i < warmup; ++i) add(false);
    for (int64_t i = warmup; i < total; ++i) add(false), add(true);
    while (backwards < total) add(true);
  }
  return orders;
}

}  // namespace

absl::StatusOr<PipelineTimeline> SchedulePipeline(const std::vector<PipelineStageTimes>& stages,
                                                  int64_t micro_batches, int32_t virtual_stages, double send_seconds) {
  const Shape x{.p = static_cast<int32_t>(stages.size()), .v = virtual_stages, .m = micro_batches};
  if (x.p < 1 || x.m < 1 || x.v < 1) {
    return absl::InvalidArgumentError("a pipeline needs a stage, a micro-batch and a chunk");
  }
  if (2 * x.m * x.v * x.p > kMaxPasses) {
    return absl::InvalidArgumentError(absl::StrCat("a pipeline of ", 2 * x.m * x.v * x.p, " passes is past the ",
                                                   kMaxPasses, " a timeline draws"));
  }
  if (x.v > 1 && x.m % x.p != 0) {
    return absl::InvalidArgumentError("an interleaved schedule needs micro-batches in multiples of the stages");
  }
  std::vector<std::vector<PipelinePass>> orders = DeviceOrders(x);
  // done[virtual stage][micro][backward]: when the pass ended, or -1.
  const int32_t virtual_count = x.p * x.v;
  std::vector<double> done(static_cast<size_t>(virtual_count) * x.m * 2, -1);
  const auto at = [&](int32_t vs, int32_t micro, bool backward) -> double& {
    return done[(static_cast<size_t>(vs) * x.m + micro) * 2 + (backward ? 1 : 0)];
  };
  std::vector<size_t> next(x.p, 0);
  std::vector<double> free(x.p, 0);
  PipelineTimeline timeline;
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (int32_t d = 0; d < x.p; ++d) {
      while (next[d] < orders[d].size()) {
        PipelinePass& pass = orders[d][next[d]];
        const int32_t vs = pass.chunk * x.p + d;
        double ready = 0;
        if (!pass.backward && vs > 0) ready = at(vs - 1, pass.micro_batch, false);
        if (pass.backward) ready = vs + 1 < virtual_count ? at(vs + 1, pass.micro_batch, true) : at(vs, pass.micro_batch, false);
        if (ready < 0) break;  // its predecessor has not run yet
        const bool crosses = (!pass.backward && vs > 0) || (pass.backward && vs + 1 < virtual_count);
        const double seconds = (pass.backward ? stages[d].backward : stages[d].forward) / x.v;
        pass.start = std::max(free[d], ready + (crosses ? send_seconds : 0));
        pass.end = free[d] = pass.start + seconds;
        at(vs, pass.micro_batch, pass.backward) = pass.end;
        timeline.makespan = std::max(timeline.makespan, pass.end);
        ++next[d], progressed = true;
      }
    }
  }
  for (int32_t d = 0; d < x.p; ++d) {
    if (next[d] != orders[d].size()) return absl::InternalError("the pipeline's order deadlocked");
    for (PipelinePass& pass : orders[d]) timeline.passes.push_back(pass);
  }
  return timeline;
}

}  // namespace placement

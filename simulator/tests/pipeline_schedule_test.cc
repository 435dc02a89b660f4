// Megatron-LM's 1F1B and interleaved orders on equal stages, against the closed forms: (m + p - 1)(F + B) without
// interleaving, m (F + B) + (p - 1)(F + B) / v with it.
#include "simulator/pipeline_schedule.h"

#include <gtest/gtest.h>

namespace placement {
namespace {

std::vector<PipelineStageTimes> Equal(int p, double f, double b) { return std::vector<PipelineStageTimes>(p, {f, b}); }

TEST(PipelineSchedule, OneFOneBTakesTheMicroBatchesPlusTheFillAndDrain) {
  for (int p : {1, 2, 4, 8}) {
    for (int m : {1, 3, 8, 16}) {
      absl::StatusOr<PipelineTimeline> t = SchedulePipeline(Equal(p, 1.0, 2.0), m, 1, 0);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_DOUBLE_EQ(t->makespan, (m + p - 1) * 3.0) << "p=" << p << " m=" << m;
      EXPECT_EQ(t->passes.size(), static_cast<size_t>(2 * p * m));
    }
  }
}

TEST(PipelineSchedule, InterleavingDividesTheFillAndDrainByTheChunks) {
  for (int v : {2, 4}) {
    absl::StatusOr<PipelineTimeline> t = SchedulePipeline(Equal(4, 1.0, 2.0), 16, v, 0);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_NEAR(t->makespan, 16 * 3.0 + 3 * 3.0 / v, 1e-9) << "v=" << v;
  }
}

TEST(PipelineSchedule, EachDeviceRunsOnePassAtATimeAfterItsPredecessors) {
  absl::StatusOr<PipelineTimeline> t = SchedulePipeline(Equal(4, 1.0, 2.0), 8, 2, 0.1);
  ASSERT_TRUE(t.ok()) << t.status();
  for (size_t i = 1; i < t->passes.size(); ++i) {
    if (t->passes[i].device == t->passes[i - 1].device) EXPECT_GE(t->passes[i].start, t->passes[i - 1].end - 1e-12);
  }
}

TEST(PipelineSchedule, RefusesWhatMegatronCannotRun) {
  EXPECT_FALSE(SchedulePipeline(Equal(4, 1, 2), 6, 2, 0).ok());  // 6 micro-batches over 4 interleaved stages
  EXPECT_FALSE(SchedulePipeline({}, 4, 1, 0).ok());
  EXPECT_FALSE(SchedulePipeline(Equal(2, 1, 2), 0, 1, 0).ok());
}

}  // namespace
}  // namespace placement

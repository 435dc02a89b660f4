// The pipeline chart of a layer-level plan: a row per stage with its label, a bar per pass, the reduction and the
// optimizer after them, one GPU's memory; names escaped; inputs that do not agree refused.
#include "client/chart/pipeline_chart.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace placement {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PipelineChartInput Input(const PipelineTimeline& t) {
  PipelineChartInput in;
  in.title = "gpt <2>";
  in.summary = {"iteration 1 s"};
  in.stage_labels = {"stage 0: host0/gpu0-7 (tp 8)", "stage 1: host1/gpu0-7 (tp 8)"};
  in.timeline = &t;
  in.reduction_seconds = 0.5, in.optimizer_seconds = 0.25;
  in.memory = {{"parameters", 4e9}, {"activations", 8e9}};
  in.memory_capacity = 80e9;
  return in;
}

TEST(PipelineChart, DrawsEveryPassStageReductionAndMemory) {
  absl::StatusOr<PipelineTimeline> t = SchedulePipeline({{1, 2}, {1, 2}}, 4, 1, 0);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<std::string> html = RenderPipelineChartHtml(Input(*t));
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, HasSubstr("stage 1: host1/gpu0-7 (tp 8)"));
  EXPECT_THAT(*html, HasSubstr("backward micro-batch 3, chunk 0"));
  EXPECT_THAT(*html, HasSubstr("gradient reduction (exposed): 500 ms"));
  EXPECT_THAT(*html, HasSubstr("optimizer step: 250 ms"));
  EXPECT_THAT(*html, HasSubstr("activations"));
  EXPECT_THAT(*html, HasSubstr("gpt &lt;2&gt;"));
  EXPECT_THAT(*html, Not(HasSubstr("gpt <2>")));
  size_t passes = 0;
  for (size_t at = html->find("micro-batch"); at != std::string::npos; at = html->find("micro-batch", at + 1)) ++passes;
  EXPECT_EQ(passes, 16u);  // 2 stages x 4 micro-batches x forward and backward
}

TEST(PipelineChart, RefusesLabelsThatDoNotMatchTheStages) {
  absl::StatusOr<PipelineTimeline> t = SchedulePipeline({{1, 2}, {1, 2}, {1, 2}}, 3, 1, 0);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<std::string> html = RenderPipelineChartHtml(Input(*t));
  ASSERT_FALSE(html.ok());
  EXPECT_THAT(html.status().message(), HasSubstr("3 stages but 2 labels"));
  PipelineChartInput none;
  EXPECT_FALSE(RenderPipelineChartHtml(none).ok());
}

}  // namespace
}  // namespace placement

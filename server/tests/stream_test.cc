// PlaceStream: a "started" message, heartbeats with the elapsed time while the placer runs, the improving
// answers a placer reports through its Budget, then the final answer; errors end the stream with Place's code.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "policy/registry.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using testing::TempDir;

// Takes about 400 ms, reporting three ever better answers on the way (their values are made up: what is under
// test is the relay, not the placer), then returns the best.
class ImprovingPlacer : public Placer {
 public:
  absl::string_view name() const override { return "improver"; }
  absl::string_view description() const override { return "test placer that reports improving answers"; }
  std::vector<Objective> objectives() const override { return {Objective::kStepTime}; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    Placement everything_on_0;
    everything_on_0.device.assign(problem.graph().num_ops(), 0);
    absl::StatusOr<PlacerResult> result = ScorePlacement(problem, everything_on_0, "improver");
    if (!result.ok()) return result;
    for (double value : {3.0, 2.0, 2.5 /* worse: not forwarded */, 1.0}) {
      if (budget.Expired()) return budget.ExpiredStatus();
      PlacerResult reported = *result;
      reported.evaluation.value = value;
      budget.Improved(reported);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return result;
  }
};

struct Collected {
  std::vector<pb::PlaceProgress> messages;
  grpc::Status status;
};

Collected Stream(int port, const pb::PlaceRequest& request) {
  auto context = ContextWithin(std::chrono::seconds(30));
  auto reader = testing::StubFor(port)->PlaceStream(context.get(), request);
  Collected out;
  pb::PlaceProgress progress;
  while (reader->Read(&progress)) out.messages.push_back(progress);
  out.status = reader->Finish();
  return out;
}

TEST(PlaceStream, StartedHeartbeatsImprovementsThenTheAnswer) {
  TempDir dir;
  PlacerRegistry registry;
  registry.Register(std::make_unique<ImprovingPlacer>());
  ServerOptions options = testing::TestOptions(dir.path());
  options.registry = &registry;
  auto server = testing::StartReadyServer(options);
  ASSERT_NE(server, nullptr);

  const Collected got = Stream(server->port(), testing::PlaceRequestFor(testing::ChainGraph(10), "2xA100", "improver"));
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  ASSERT_GE(got.messages.size(), 3u);
  EXPECT_EQ(got.messages.front().kind(), pb::PlaceProgress::KIND_STARTED);
  EXPECT_EQ(got.messages.back().kind(), pb::PlaceProgress::KIND_RESULT);
  EXPECT_EQ(got.messages.back().answer().assignment_size(), 10);
  EXPECT_EQ(got.messages.back().answer().algorithm(), "improver");

  int heartbeats = 0;
  std::vector<double> improved;
  double last_elapsed = 0;
  for (const pb::PlaceProgress& p : got.messages) {
    EXPECT_GE(p.elapsed_seconds(), last_elapsed);
    last_elapsed = p.elapsed_seconds();
    if (p.kind() == pb::PlaceProgress::KIND_HEARTBEAT) ++heartbeats;
    if (p.kind() == pb::PlaceProgress::KIND_IMPROVED) {
      improved.push_back(p.answer().score().value());
      EXPECT_EQ(p.answer().assignment_size(), 10);
    }
  }
  EXPECT_GE(heartbeats, 2);  // one per phase at least, and the 50 ms ticker over ~400 ms
  EXPECT_EQ(improved, (std::vector<double>{3.0, 2.0, 1.0}));
}

TEST(PlaceStream, ErrorsEndTheStreamWithTheCode) {
  TempDir dir;
  auto server = testing::StartReadyServer(testing::TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const Collected got = Stream(server->port(), testing::PlaceRequestFor(testing::ChainGraph(3), "2xA100", "nope"));
  EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_FALSE(got.messages.empty());
  EXPECT_EQ(got.messages.front().kind(), pb::PlaceProgress::KIND_STARTED);
  for (const pb::PlaceProgress& p : got.messages) EXPECT_NE(p.kind(), pb::PlaceProgress::KIND_RESULT);
}

TEST(PlaceStream, RealPortfolioAnswersAndCaches) {
  TempDir dir;
  auto server = testing::StartReadyServer(testing::TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = testing::PlaceRequestFor(testing::LayeredGraph(300), "4xV100");
  request.set_budget_ms(300);
  const Collected first = Stream(server->port(), request);
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  ASSERT_EQ(first.messages.back().kind(), pb::PlaceProgress::KIND_RESULT);
  EXPECT_FALSE(first.messages.back().answer().cache_hit());
  const Collected second = Stream(server->port(), request);
  ASSERT_TRUE(second.status.ok());
  EXPECT_TRUE(second.messages.back().answer().cache_hit());
  EXPECT_EQ(second.messages.back().answer().score().value(), first.messages.back().answer().score().value());
}

}  // namespace
}  // namespace placement::server

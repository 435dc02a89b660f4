// The client's deadline reaches the placers through their Budget, and a cancelled call stops its placer: the
// client hears back within its deadline plus a little, and the server's work ends too (nothing stays in
// flight, the outcome is counted with the right code).
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "policy/registry.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using testing::PlaceRequestFor;
using testing::TempDir;

// Searches until its budget ends, then gives up: the shape of an exact method on a graph too large for it.
class UntilTheBudgetEnds : public Placer {
 public:
  explicit UntilTheBudgetEnds(absl::Notification* started) : started_(started) {}
  absl::string_view name() const override { return "until_the_budget_ends"; }
  absl::string_view description() const override { return "test placer that never finishes on its own"; }
  std::vector<Objective> objectives() const override { return {Objective::kStepTime}; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem&, const Budget& budget) const override {
    if (!started_->HasBeenNotified()) started_->Notify();
    while (!budget.Expired()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return budget.ExpiredStatus();
  }

 private:
  absl::Notification* started_;
};

// Waits (up to 10 s) until the server has nothing in flight and has counted `series`; returns the metrics.
std::string WaitForMetrics(PlacementServer& server, const std::string& series) {
  std::string text;
  for (const absl::Time until = absl::Now() + absl::Seconds(10); absl::Now() < until;) {
    text = server.metrics().Text();
    if (text.find("placement_inflight_requests 0") != std::string::npos && text.find(series) != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return text;
}

class Deadlines : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Register(std::make_unique<UntilTheBudgetEnds>(&started_));
    ServerOptions options = testing::TestOptions(dir_.path());
    options.registry = &registry_;
    options.limits.default_budget = absl::Seconds(60);  // only the client's deadline can end the work
    server_ = testing::StartReadyServer(options);
    ASSERT_NE(server_, nullptr);
  }

  TempDir dir_;
  absl::Notification started_;
  PlacerRegistry registry_;
  std::unique_ptr<PlacementServer> server_;
};

TEST_F(Deadlines, TheClientDeadlineEndsThePlacer) {
  const absl::Time begin = absl::Now();
  auto context = ContextWithin(std::chrono::milliseconds(300));
  pb::PlaceResponse response;
  const grpc::Status s =
      testing::StubFor(server_->port())
          ->Place(context.get(), PlaceRequestFor(testing::ChainGraph(50), "2xA100", "until_the_budget_ends"),
                  &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_LT(absl::Now() - begin, 4 * absl::Milliseconds(300) + absl::Seconds(2));  // generous for a loaded host
  const std::string text = WaitForMetrics(*server_, "code=\"DEADLINE_EXCEEDED\",method=\"Place\"} 1");
  EXPECT_NE(text.find("placement_requests_total{code=\"DEADLINE_EXCEEDED\",method=\"Place\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("placement_inflight_requests 0"), std::string::npos);
  // The server stopped before the client's deadline rather than after it.
  EXPECT_NE(text.find("placement_request_duration_seconds_bucket{algorithm=\"until_the_budget_ends\",method=\"Place\","
                      "le=\"0.5\"} 1"),
            std::string::npos)
      << text;
}

TEST_F(Deadlines, CancellingTheCallStopsThePlacer) {
  auto context = ContextWithin(std::chrono::seconds(30));
  grpc::Status status;
  std::thread client([&] {
    pb::PlaceResponse response;
    status = testing::StubFor(server_->port())
                 ->Place(context.get(), PlaceRequestFor(testing::ChainGraph(50), "2xA100", "until_the_budget_ends"),
                         &response);
  });
  ASSERT_TRUE(started_.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Time cancelled_at = absl::Now();
  context->TryCancel();
  client.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  const std::string text = WaitForMetrics(*server_, "code=\"CANCELLED\",method=\"Place\"} 1");
  EXPECT_NE(text.find("placement_requests_total{code=\"CANCELLED\",method=\"Place\"} 1"), std::string::npos) << text;
  EXPECT_LT(absl::Now() - cancelled_at, absl::Seconds(5));  // the placer sees the flag; generous for a loaded host
}

TEST(Deadline, ShortDeadlineOnALargeGraph) {
  TempDir dir;
  auto server = testing::StartReadyServer(testing::TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const pb::PlaceRequest request = PlaceRequestFor(testing::LayeredGraph(100000), "8xH100");
  const absl::Time begin = absl::Now();
  auto context = ContextWithin(std::chrono::milliseconds(300));
  pb::PlaceResponse response;
  const grpc::Status s = testing::StubFor(server->port())->Place(context.get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_LT(absl::Now() - begin, 4 * absl::Milliseconds(300) + absl::Seconds(2));  // generous for a loaded host
  // Decoding 100k operators is not interruptible, but the placer never starts: the server is idle again soon.
  const std::string text = WaitForMetrics(*server, "code=\"DEADLINE_EXCEEDED\",method=\"Place\"} 1");
  EXPECT_NE(text.find("placement_inflight_requests 0"), std::string::npos) << text;
}

}  // namespace
}  // namespace placement::server

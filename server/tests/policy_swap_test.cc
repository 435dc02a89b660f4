// Swapping the learned policy's weights while serving, with real weights files: ReloadPolicy (admin token) and
// SIGHUP switch every later answer and its cache key to the new version, a corrupt file leaves the old weights
// serving, a request in flight finishes on the weights it started with, and named policies serve side by side.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/weights_path.h"
#include "server/policy_setup.h"
#include "server/tests/server_process.h"
#include "server/tests/test_util.h"
#include "tests/placectl_run.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::TempDir;

constexpr char kToken[] = "swap-test-token";

// The shipped weights saved under another version: other bytes, so another loaded version ("swap-b+<hash>").
std::string WeightsNamed(const TempDir& dir, const std::string& version) {
  auto policy = learned::LearnedPolicy::LoadForTraining(learned::DefaultPolicyWeights());
  EXPECT_TRUE(policy.ok()) << policy.status();
  const std::string path = absl::StrCat(dir.path(), "/", version, ".pt");
  EXPECT_TRUE((*policy)->Save(path, version).ok());
  return path;
}

std::unique_ptr<PlacementServer> StartWithPolicy(const TempDir& dir, const std::string& weights,
                                                 std::vector<PolicySpec> named = {}, bool token = true) {
  ServerOptions options = testing::TestOptions(dir.path() + "/data");
  options.policy_device = "cpu";
  options.policy_weights = weights;
  options.named_policies = std::move(named);
  if (token) options.security.auth_token = kToken;
  absl::Status setup = SetUpPolicy(&options);
  EXPECT_TRUE(setup.ok()) << setup;
  return testing::StartReadyServer(std::move(options));
}

std::unique_ptr<grpc::ClientContext> Authorized() {
  auto context = testing::ContextWithin(std::chrono::seconds(60));
  context->AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
  return context;
}

absl::StatusOr<pb::PlaceResponse> Place(int port, const pb::PlaceRequest& request) {
  pb::PlaceResponse response;
  const grpc::Status s = testing::StubFor(port)->Place(Authorized().get(), request, &response);
  if (!s.ok()) return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return response;
}

absl::StatusOr<pb::ReloadPolicyResponse> Reload(int port, const pb::ReloadPolicyRequest& request,
                                                bool with_token = true) {
  pb::ReloadPolicyResponse response;
  auto context = with_token ? Authorized() : testing::ContextWithin();
  const grpc::Status s = testing::StubFor(port)->ReloadPolicy(context.get(), request, &response);
  if (!s.ok()) return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return response;
}

pb::PlaceRequest PolicyRequest(const std::string& algorithm = "policy", int ops = 60) {
  return testing::PlaceRequestFor(testing::LayeredGraph(ops), "4xV100", algorithm);
}

// The weights version an answer names in its policy version ("placers-V/learned-<weights>").
std::string WeightsOf(const pb::PlaceResponse& r) {
  const size_t at = r.policy_version().find("/learned-");
  return at == std::string::npos ? "" : r.policy_version().substr(at + 9);
}

// Whether every note that names a policy names `version` (an answer computed on one set of weights).
bool NotesNameOnly(const pb::PlaceResponse& r, const std::string& version) {
  bool named = false;
  for (const std::string& note : r.notes()) {
    const size_t at = note.find("policy ");
    if (at == std::string::npos || note.find(" on cpu", at) == std::string::npos) continue;
    named = true;
    if (note.find(version) == std::string::npos) return false;
  }
  return named;
}

TEST(PolicySwap, ReloadSwitchesEveryLaterAnswerAndItsCacheKey) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a"), b = WeightsNamed(dir, "swap-b");
  auto server = StartWithPolicy(dir, a);
  ASSERT_NE(server, nullptr);
  absl::StatusOr<pb::PlaceResponse> before = Place(server->port(), PolicyRequest());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(absl::StartsWith(WeightsOf(*before), "swap-a+")) << before->policy_version();
  ASSERT_TRUE(Place(server->port(), PolicyRequest())->cache_hit());

  pb::ReloadPolicyRequest reload;
  reload.set_weights_path(b);
  absl::StatusOr<pb::ReloadPolicyResponse> swapped = Reload(server->port(), reload);
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  ASSERT_EQ(swapped->reloaded_size(), 1);
  EXPECT_EQ(swapped->reloaded(0), "default");
  EXPECT_TRUE(absl::StartsWith(swapped->policies(0).version(), "swap-b+"));

  absl::StatusOr<pb::PlaceResponse> after = Place(server->port(), PolicyRequest());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(after->cache_hit()) << "the new version is in the cache key";
  EXPECT_EQ(WeightsOf(*after), swapped->policies(0).version());
  EXPECT_TRUE(NotesNameOnly(*after, swapped->policies(0).version()));

  // The same weights sent as bytes (placectl reload --weights) are kept under the data directory.
  std::ifstream in(a, std::ios::binary);
  reload.clear_weights_path();
  reload.set_weights(std::string(std::istreambuf_iterator<char>(in), {}));
  absl::StatusOr<pb::ReloadPolicyResponse> back = Reload(server->port(), reload);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->policies(0).version(),
            before->policy_version().substr(before->policy_version().find("/learned-") + 9));
  EXPECT_TRUE(absl::StartsWith(back->policies(0).weights(), dir.path() + "/data/policies/"));
  EXPECT_EQ(WeightsOf(*Place(server->port(), PolicyRequest())), back->policies(0).version());
}

TEST(PolicySwap, CorruptFileIsRefusedAndTheOldWeightsKeepServing) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a");
  auto server = StartWithPolicy(dir, a);
  ASSERT_NE(server, nullptr);
  const std::string serving = WeightsOf(*Place(server->port(), PolicyRequest()));

  const std::string corrupt = dir.path() + "/corrupt.pt";
  std::ofstream(corrupt) << "PK\x03\x04 not a weights archive";
  pb::ReloadPolicyRequest reload;
  reload.set_weights_path(corrupt);
  absl::StatusOr<pb::ReloadPolicyResponse> refused = Reload(server->port(), reload);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kDataLoss) << refused.status();
  EXPECT_NE(refused.status().message().find(corrupt), std::string::npos) << refused.status();
  reload.clear_weights_path();
  reload.set_weights("truncated");
  EXPECT_EQ(Reload(server->port(), reload).status().code(), absl::StatusCode::kDataLoss);
  reload.set_weights_path(dir.path() + "/missing.pt");
  reload.clear_weights();
  EXPECT_EQ(Reload(server->port(), reload).status().code(), absl::StatusCode::kNotFound);
  // The policy's own file gone bad: a reload from it (as SIGHUP does) is refused too.
  std::ofstream(a, std::ios::trunc) << "garbage";
  EXPECT_EQ(Reload(server->port(), pb::ReloadPolicyRequest()).status().code(), absl::StatusCode::kDataLoss);

  absl::StatusOr<pb::PlaceResponse> after = Place(server->port(), PolicyRequest("policy", 80));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(WeightsOf(*after), serving);
  absl::StatusOr<std::string> metrics = testing::HttpGet(server->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->find("placement_policy_reloads_total{outcome=\"refused\"} 4"), std::string::npos) << *metrics;
}

TEST(PolicySwap, RequestInFlightFinishesOnTheWeightsItStartedWith) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a"), b = WeightsNamed(dir, "swap-b");
  auto server = StartWithPolicy(dir, a);
  ASSERT_NE(server, nullptr);
  // policy_finetune spends its whole budget tuning a copy of the weights it started with.
  pb::PlaceRequest slow = PolicyRequest("policy_finetune", 120);
  slow.set_budget_ms(2500);
  absl::StatusOr<pb::PlaceResponse> in_flight;
  std::thread client([&] { in_flight = Place(server->port(), slow); });
  bool running = false;
  for (const absl::Time until = absl::Now() + absl::Seconds(20); !running && absl::Now() < until;) {
    absl::StatusOr<std::string> metrics = testing::HttpGet(server->metrics_port(), "/metrics");
    running = metrics.ok() && metrics->find("placement_inflight_requests 1") != std::string::npos;
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(running);
  pb::ReloadPolicyRequest reload;
  reload.set_weights_path(b);
  absl::StatusOr<pb::ReloadPolicyResponse> swapped = Reload(server->port(), reload);
  ASSERT_TRUE(swapped.ok()) << swapped.status();
  absl::StatusOr<pb::PlaceResponse> later = Place(server->port(), PolicyRequest());
  client.join();

  ASSERT_TRUE(in_flight.ok()) << in_flight.status();
  EXPECT_TRUE(absl::StartsWith(WeightsOf(*in_flight), "swap-a+")) << in_flight->policy_version();
  EXPECT_TRUE(NotesNameOnly(*in_flight, WeightsOf(*in_flight)));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(WeightsOf(*later), swapped->policies(0).version());
}

TEST(PolicySwap, ReloadNeedsTheAdminToken) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a");
  {
    auto server = StartWithPolicy(dir, a);
    ASSERT_NE(server, nullptr);
    EXPECT_EQ(Reload(server->port(), pb::ReloadPolicyRequest(), /*with_token=*/false).status().code(),
              absl::StatusCode::kUnauthenticated);
  }
  TempDir open_dir;
  auto open = StartWithPolicy(open_dir, a, {}, /*token=*/false);
  ASSERT_NE(open, nullptr);
  absl::StatusOr<pb::ReloadPolicyResponse> refused = Reload(open->port(), pb::ReloadPolicyRequest(), false);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << refused.status();
  EXPECT_NE(refused.status().message().find("SIGHUP"), std::string::npos);
}

TEST(PolicySwap, NamedPoliciesServeSideBySide) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a"), b = WeightsNamed(dir, "swap-b");
  auto server = StartWithPolicy(dir, a, {{"tuned", b}});
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = PolicyRequest();
  EXPECT_TRUE(absl::StartsWith(WeightsOf(*Place(server->port(), request)), "swap-a+"));
  request.set_policy("tuned");
  absl::StatusOr<pb::PlaceResponse> tuned = Place(server->port(), request);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_TRUE(absl::StartsWith(WeightsOf(*tuned), "swap-b+"));
  request.set_policy("nonesuch");
  absl::StatusOr<pb::PlaceResponse> unknown = Place(server->port(), request);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("default, tuned"), std::string::npos) << unknown.status();

  pb::GetServerInfoResponse info;
  ASSERT_TRUE(
      testing::StubFor(server->port())->GetServerInfo(Authorized().get(), pb::GetServerInfoRequest(), &info).ok());
  ASSERT_EQ(info.policies_size(), 2);
  EXPECT_EQ(info.policies(0).name(), "default");
  EXPECT_TRUE(info.policies(0).is_default());
  EXPECT_EQ(info.policies(1).name(), "tuned");
  EXPECT_EQ(info.policies(1).weights(), b);
}

// placectl reload sends a weights file's bytes; placectl info and bench then name the new version.
TEST(PolicySwap, PlacectlReloadSwapsAndInfoAndBenchNameTheNewVersion) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a"), b = WeightsNamed(dir, "swap-b");
  auto server = StartWithPolicy(dir, a, {{"second", a}});
  ASSERT_NE(server, nullptr);
  const std::string address = "--server 127.0.0.1:" + std::to_string(server->port());
  ::setenv("PLACEMENT_AUTH_TOKEN", kToken, 1);
  const placement::testing::PlacectlResult reload =
      placement::testing::RunPlacectl("reload " + address + " --policy second --weights " + b);
  const placement::testing::PlacectlResult info = placement::testing::RunPlacectl("info " + address);
  const std::string graph = dir.path() + "/g.json";
  std::ofstream(graph) << placement::testing::RunPlacectl("generate layered --ops 40").out;
  const placement::testing::PlacectlResult bench = placement::testing::RunPlacectl(
      "bench " + graph + " " + address + " --devices 2xV100 --algorithm policy --policy second --requests 20");
  ::unsetenv("PLACEMENT_AUTH_TOKEN");
  ASSERT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_NE(reload.out.find("reloaded       second"), std::string::npos) << reload.out;
  EXPECT_NE(info.out.find("default (default): swap-a+"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("second: swap-b+"), std::string::npos) << info.out;
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(bench.out.find("20 from placers-"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("/learned-swap-b+"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("mixed        0 answers"), std::string::npos) << bench.out;
}

TEST(PolicySwap, SighupReloadsTheRealServerFromItsFile) {
  TempDir dir;
  const std::string a = WeightsNamed(dir, "swap-a"), b = WeightsNamed(dir, "swap-b");
  const std::string weights = dir.path() + "/serving.pt";
  std::filesystem::copy_file(a, weights);
  const std::string log = dir.path() + "/server.log";
  testing::ServerProcess process({"--listen=127.0.0.1:0", "--metrics_listen=", "--data_dir=" + dir.path() + "/data",
                                  "--policy_device=cpu", "--policy_weights=" + weights},
                                 log);
  const int port = process.PortFromLine("listening on ", absl::Seconds(30));
  ASSERT_GT(port, 0) << "see " << log;
  auto info = [&] {
    pb::GetServerInfoResponse r;
    auto context = testing::ContextWithin(std::chrono::seconds(10));
    context->set_wait_for_ready(true);
    (void)testing::StubFor(port)->GetServerInfo(context.get(), pb::GetServerInfoRequest(), &r);
    return r;
  };
  auto wait_for_version = [&](const std::string& prefix) {
    for (const absl::Time until = absl::Now() + absl::Seconds(30); absl::Now() < until;) {
      const pb::GetServerInfoResponse r = info();
      if (r.ready() && r.policies_size() > 0 && absl::StartsWith(r.policies(0).version(), prefix)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  ASSERT_TRUE(wait_for_version("swap-a+"));
  std::filesystem::copy_file(b, weights, std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(::kill(process.pid(), SIGHUP), 0);
  ASSERT_TRUE(wait_for_version("swap-b+"));
  absl::StatusOr<pb::PlaceResponse> answer = Place(port, PolicyRequest());
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(absl::StartsWith(WeightsOf(*answer), "swap-b+"));

  std::ofstream(weights, std::ios::trunc) << "not weights";
  ASSERT_EQ(::kill(process.pid(), SIGHUP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(absl::StartsWith(info().policies(0).version(), "swap-b+"));
  ASSERT_EQ(::kill(process.pid(), SIGTERM), 0);
  EXPECT_EQ(process.WaitForExit(absl::Seconds(30)), 0);
  std::ifstream in(log);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(text.find("policy reload refused"), std::string::npos) << text;
}

}  // namespace
}  // namespace placement::server

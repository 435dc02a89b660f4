#include "policy/learned/learned_policy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "graph/graph_families.h"
#include "policy/learned/coarsen.h"
#include "policy/learned/decode.h"
#include "policy/learned/network.h"
#include "policy/learned/tests/test_graphs.h"

namespace placement::learned {
namespace {

namespace fs = std::filesystem;

PolicyInput LayeredInput(Fixture& f) { return BuildPolicyInput(*f.costs, *Coarsen(*f.costs)); }

Fixture Layered() {
  FamilyOptions o;
  o.approx_ops = 200;
  o.seed = 3;
  return Fixture(*GenerateFamily("layered", o), "4xV100");
}

fs::path TempFile(const std::string& name) {
  return fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

TEST(LearnedPolicy, GreedyForwardPassIsDeterministic) {
  Fixture f = Layered();
  const PolicyInput in = LayeredInput(f);
  auto a = LearnedPolicy::Create(NetworkOptions{}, 7);
  auto b = LearnedPolicy::Create(NetworkOptions{}, 7);
  auto other = LearnedPolicy::Create(NetworkOptions{}, 8);
  absl::StatusOr<PolicyScores> sa = a->Score(in), sa2 = a->Score(in), sb = b->Score(in), so = other->Score(in);
  ASSERT_TRUE(sa.ok()) << sa.status();
  ASSERT_EQ(sa->logits.size(), static_cast<size_t>(in.num_groups) * in.num_devices);
  EXPECT_EQ(sa->logits, sa2->logits);
  EXPECT_EQ(sa->logits, sb->logits);
  EXPECT_NE(sa->logits, so->logits);
  EXPECT_EQ(DecodeSingleShot(*sa, nullptr), DecodeSingleShot(*sb, nullptr));
}

TEST(LearnedPolicy, SampledDecodingFollowsItsSeed) {
  Fixture f = Layered();
  const PolicyInput in = LayeredInput(f);
  const PolicyScores s = *LearnedPolicy::Create(NetworkOptions{}, 7)->Score(in);
  std::mt19937_64 r1(5), r2(5), r3(6);
  const std::vector<int32_t> x = DecodeSingleShot(s, &r1), y = DecodeSingleShot(s, &r2), z = DecodeSingleShot(s, &r3);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

TEST(LearnedPolicy, GuidedCandidatesKeepTheDevicesNearTheBestForEveryOperatorOfAGroup) {
  Fixture f(Diamond(), "4xV100");
  Coarsening groups = *Coarsen(*f.costs, CoarseningOptions{.max_groups = 2048, .fuse_chains = false});
  ASSERT_EQ(groups.num_groups, 4);
  PolicyScores s;
  s.groups = 4;
  s.devices = 4;
  const float masked = -1e9f;
  // Per group: probabilities proportional to exp(logit); ratios to the best are 1, e^-1, e^-3, e^-5.
  s.logits = {0, -1, -3, -5, -1, 0, masked, -5, 2, 2, 2, 2, masked, masked, masked, 0};
  auto row = [&](const std::vector<uint8_t>& c, const std::string& op) {
    const OpId v = f.graph.FindOp(op);
    return std::vector<int>(c.begin() + v * 4, c.begin() + v * 4 + 4);
  };
  auto guided = [&](double threshold) { return OperatorCandidates(GroupCandidates(s, threshold), groups, s.devices); };
  auto group_row = [&](const std::vector<uint8_t>& c, int g) {
    const OpId v = groups.ops[groups.group_begin[g]];
    return std::vector<int>(c.begin() + v * 4, c.begin() + v * 4 + 4);
  };
  const std::vector<uint8_t> best = guided(1.0);
  ASSERT_EQ(best.size(), 16u);
  EXPECT_EQ(group_row(best, 0), (std::vector<int>{1, 0, 0, 0}));
  EXPECT_EQ(group_row(best, 2), (std::vector<int>{1, 1, 1, 1}));  // ties all kept
  const std::vector<uint8_t> wide = guided(0.1);                  // e^-1 > 0.1 > e^-3
  EXPECT_EQ(group_row(wide, 0), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(group_row(wide, 1), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(group_row(wide, 3), (std::vector<int>{0, 0, 0, 1}));  // a masked device never comes back
  const std::vector<uint8_t> widest = guided(1e-30);
  EXPECT_EQ(group_row(widest, 1), (std::vector<int>{1, 1, 0, 1}));
  // Every operator carries its group's row.
  for (const char* op : {"a", "b", "c", "d"}) {
    const OpId v = f.graph.FindOp(op);
    EXPECT_EQ(row(wide, op), group_row(wide, groups.group_of_op[v])) << op;
  }
}

// Sampled candidates: the best device always, a masked one never, and every other one about as often as
// sigmoid(logit - best - log threshold) says; at a threshold of 0.1 the sample's most likely row is the
// deterministic guided row.
TEST(LearnedPolicy, SampledGuidedCandidatesKeepTheBestAndDrawTheOthersByTheirScore) {
  PolicyScores s;
  s.groups = 2;
  s.devices = 4;
  const float masked = -1e9f;
  s.logits = {0, -1, -3, masked, -2, 0, 0, -9};
  const double threshold = 0.1;
  std::mt19937_64 rng(5);
  const int n = 4000;
  std::vector<int> kept(8, 0);
  for (int i = 0; i < n; ++i) {
    const std::vector<uint8_t> rows = SampleGroupCandidates(s, threshold, rng);
    ASSERT_EQ(rows.size(), 8u);
    for (int j = 0; j < 8; ++j) kept[j] += rows[j];
  }
  auto expected = [&](float logit, float best) { return 1 / (1 + std::exp(-(logit - best - std::log(threshold)))); };
  EXPECT_EQ(kept[0], n);  // group 0's best
  EXPECT_EQ(kept[3], 0);  // masked
  EXPECT_NEAR(kept[1] / double(n), expected(-1, 0), 0.03);
  EXPECT_NEAR(kept[2] / double(n), expected(-3, 0), 0.03);
  EXPECT_NEAR(kept[4] / double(n), expected(-2, 0), 0.03);
  EXPECT_EQ(kept[5], n);  // the first of two tied best devices is kept always, the other nearly always
  EXPECT_NEAR(kept[6] / double(n), expected(0, 0), 0.03);
  EXPECT_LT(kept[7], n / 100);
  const std::vector<uint8_t> mode = GroupCandidates(s, threshold);
  EXPECT_EQ(std::vector<int>(mode.begin(), mode.end()), (std::vector<int>{1, 1, 0, 0, 1, 1, 1, 0}));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(kept[j] > n / 2, mode[j] == 1) << j;
}

TEST(LearnedPolicy, NeverChoosesADeviceThePinForbids) {
  Fixture f(Diamond("gpu1"), "2xV100");
  const Coarsening c = *Coarsen(*f.costs);
  const PolicyInput in = BuildPolicyInput(*f.costs, c);
  const PolicyScores s = *LearnedPolicy::Create(NetworkOptions{}, 1)->Score(in);
  const int32_t gd = c.group_of_op[f.graph.FindOp("d")];
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(DecodeSingleShot(s, &rng)[gd], 1);
  std::vector<int32_t> current(c.num_groups, 1);
  DecodeSweep(s, in, current, &rng);
  EXPECT_EQ(current[gd], 1);
}

TEST(LearnedPolicy, SavedWeightsLoadWithTheSameScoresAndAVersion) {
  Fixture f = Layered();
  const PolicyInput in = LayeredInput(f);
  auto policy = LearnedPolicy::Create(NetworkOptions{32, 2}, 11);
  const fs::path path = TempFile("policy_roundtrip.pt");
  ASSERT_TRUE(policy->Save(path.string(), "test-1").ok());
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> loaded = LearnedPolicy::Load(path.string(), "cpu");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->Score(in)->logits, policy->Score(in)->logits);
  EXPECT_EQ((*loaded)->version().rfind("test-1+", 0), 0u) << (*loaded)->version();
  EXPECT_EQ((*loaded)->device(), "cpu");
  fs::remove(path);
}

// The same weights saved under two names are the same bytes, so a file rebuilt by its training command has the
// manifest's SHA-256 and the same version wherever it was written first.
TEST(LearnedPolicy, SavedBytesDoNotDependOnTheFileName) {
  auto policy = LearnedPolicy::Create(NetworkOptions{16, 1}, 5);
  const fs::path a = TempFile("policy_name_a.pt"), b = TempFile("weights_b.bin");
  ASSERT_TRUE(policy->Save(a.string(), "v").ok());
  ASSERT_TRUE(policy->Save(b.string(), "v").ok());
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  const std::string bytes_a((std::istreambuf_iterator<char>(fa)), std::istreambuf_iterator<char>());
  const std::string bytes_b((std::istreambuf_iterator<char>(fb)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(bytes_a.empty());
  EXPECT_EQ(bytes_a, bytes_b);
  EXPECT_EQ((*LearnedPolicy::Load(a.string(), "cpu"))->version(), (*LearnedPolicy::Load(b.string(), "cpu"))->version());
  fs::remove(a);
  fs::remove(b);
}

TEST(LearnedPolicy, MissingWeightsAreNotFound) {
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> p = LearnedPolicy::Load("/nonexistent/policy.pt", "cpu");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(p.status().message().find("/nonexistent/policy.pt"), std::string::npos);
}

TEST(LearnedPolicy, CorruptOrTruncatedWeightsAreDataLossNotACrash) {
  const fs::path garbage = TempFile("policy_garbage.pt");
  std::ofstream(garbage) << "this is not a weights file";
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> p = LearnedPolicy::Load(garbage.string(), "cpu");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss) << p.status();

  const fs::path truncated = TempFile("policy_truncated.pt");
  ASSERT_TRUE(LearnedPolicy::Create(NetworkOptions{}, 1)->Save(truncated.string(), "t").ok());
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  p = LearnedPolicy::Load(truncated.string(), "cpu");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss) << p.status();
  fs::remove(garbage);
  fs::remove(truncated);
}

// A weights archive written by hand: the network's tensors with the given header.
void WriteArchive(const fs::path& path, const std::string& format, int64_t stated_hidden) {
  std::shared_ptr<LearnedPolicy> policy = LearnedPolicy::Create(NetworkOptions{64, 3}, 1);
  torch::serialize::OutputArchive archive;
  policy->impl().net->save(archive);
  archive.write("meta/format", c10::IValue(format));
  archive.write("meta/version", c10::IValue(std::string("test")));
  archive.write("meta/hidden", c10::IValue(stated_hidden));
  archive.write("meta/layers", c10::IValue(int64_t{3}));
  archive.save_to(path.string());
}

TEST(LearnedPolicy, WeightsOfAnotherFormatOrShapeAreRefusedByName) {
  const fs::path old_format = TempFile("policy_old_format.pt");
  WriteArchive(old_format, "placement-policy-0", 64);
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> p = LearnedPolicy::Load(old_format.string(), "cpu");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(p.status().message().find("placement-policy-0"), std::string::npos) << p.status();

  const fs::path wrong_shape = TempFile("policy_wrong_shape.pt");
  WriteArchive(wrong_shape, "placement-policy-1", 32);  // tensors are 64 wide
  p = LearnedPolicy::Load(wrong_shape.string(), "cpu");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(p.status().message().find("wrong shape"), std::string::npos) << p.status();

  WriteArchive(wrong_shape, "placement-policy-1", 64);  // the control: the same archive with the true width loads
  EXPECT_TRUE(LearnedPolicy::Load(wrong_shape.string(), "cpu").ok());
  fs::remove(old_format);
  fs::remove(wrong_shape);
}

}  // namespace
}  // namespace placement::learned

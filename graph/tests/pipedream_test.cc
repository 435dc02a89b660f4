// PipeDream's published per-layer profiles as graphs: every profile of ../shared/bench/pipedream imports, and
// as a training step its measured times add up to the single-worker time PipeDream's own planner reports
// (reference.tsv); malformed profiles are refused by line.
#include "graph/pipedream.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace placement {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kPipeDream = fs::path(PLACEMENT_SHARED_DIR) / "bench" / "pipedream";

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

double TotalMeasured(const Graph& g) {
  double total = 0;
  for (OpId op = 0; op < g.num_ops(); ++op) {
    for (const MeasuredTime& m : g.measured(op)) total += m.seconds;
  }
  return total;
}

constexpr char kTiny[] =
    "node1 -- Input0 -- forward_compute_time=0.000, backward_compute_time=0.000, activation_size=100.0, "
    "parameter_size=0.000\n"
    "node2 -- Conv2d(3, 8, kernel_size=(3, 3)) -- forward_compute_time=2.0, backward_compute_time=3.0, "
    "activation_size=800.0, parameter_size=864.000\n"
    "node3 -- ReLU(inplace) -- forward_compute_time=0.5, backward_compute_time=0.25, activation_size=800.0, "
    "parameter_size=0.000\n"
    "\tnode1 -- node2\n"
    "\tnode2 -- node3\n";

TEST(PipeDream, InferenceAndTrainingFormsOfOneProfile) {
  ASSERT_TRUE(LooksLikePipeDreamProfile(kTiny));
  absl::StatusOr<Problem> inference = ParsePipeDreamProfile(kTiny, false);
  absl::StatusOr<Problem> training = ParsePipeDreamProfile(kTiny, true);
  ASSERT_TRUE(inference.ok()) << inference.status();
  ASSERT_TRUE(training.ok()) << training.status();
  const Graph& f = inference->graph;
  ASSERT_EQ(f.num_ops(), 2);  // the Input layer is left out, as PipeDream's planner leaves it out
  EXPECT_EQ(f.op_type(f.FindOp("node2")), "Conv2d");
  EXPECT_EQ(f.param_bytes(f.FindOp("node2")), 864);
  EXPECT_DOUBLE_EQ(TotalMeasured(f), 0.0025);
  const Graph& t = training->graph;
  ASSERT_EQ(t.num_ops(), 4);
  EXPECT_DOUBLE_EQ(TotalMeasured(t), 0.00575);
  const OpId grad = t.FindOp("node2/grad");
  ASSERT_NE(grad, kNone);
  EXPECT_TRUE(t.is_backward(grad));
  EXPECT_EQ(t.colocation_group(grad), t.colocation_group(t.FindOp("node2")));
  // node3's gradient flows back to node2's backward operator, the size of node2's activation.
  bool back = false;
  for (EdgeId e : t.in_edges(grad)) back = back || (t.edge(e).src == t.FindOp("node3/grad") && t.edge(e).bytes == 800);
  EXPECT_TRUE(back);
}

TEST(PipeDream, MalformedProfilesAreRefusedByLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"node1 -- Conv -- forward_compute_time=1\n", "line 1: 'backward_compute_time' is missing"},
      {"node1 -- Conv -- forward_compute_time=-1, backward_compute_time=0, activation_size=1, parameter_size=0\n",
       "line 1: 'forward_compute_time=-1' is not key=value with a finite, non-negative value"},
      {"node1 -- Conv -- forward_compute_time=1, backward_compute_time=0, activation_size=[1; x], parameter_size=0\n",
       "line 1: 'activation_size=[1; x]'"},
      {std::string(kTiny) + "\tnode3 -- node9\n", "line 6: the edge names a layer not listed ('node9')"},
      {std::string(kTiny) + "node2 -- ReLU -- forward_compute_time=1, backward_compute_time=0, activation_size=1, "
                            "parameter_size=0\n",
       "line 6: layer 'node2' is listed twice"},
      {"node1 -- broken -- forward_compute_time=1\n", "line 1: 'backward_compute_time' is missing"},
      {"layer one\n", "not a PipeDream profile"},
      {std::string(kTiny) + "\tnode3 -- node1\n", "cycle"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<Problem> p = ParsePipeDreamProfile(text, true);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(p.status().message()), HasSubstr(message)) << text;
  }
}

TEST(PipeDream, EveryPublishedProfileAddsUpToItsSingleWorkerTime) {
  if (!fs::exists(kPipeDream / "reference.tsv")) GTEST_SKIP() << "../shared/bench/pipedream is absent";
  std::map<std::string, double> single_worker;
  std::stringstream reference(Read(kPipeDream / "reference.tsv"));
  for (std::string line; std::getline(reference, line);) {
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    double seconds = 0;
    if (cols.size() >= 5 && line[0] != '#' && absl::SimpleAtod(cols[4], &seconds)) single_worker[cols[0]] = seconds;
  }
  int profiles = 0;
  for (const auto& file : fs::directory_iterator(kPipeDream / "profiles")) {
    const std::string text = Read(file.path());
    ASSERT_TRUE(LooksLikePipeDreamProfile(text)) << file.path();
    absl::StatusOr<Problem> p = ParsePipeDreamProfile(text, true);
    ASSERT_TRUE(p.ok()) << file.path() << ": " << p.status();
    ++profiles;
    auto it = single_worker.find(file.path().stem().string());
    if (it != single_worker.end()) EXPECT_NEAR(TotalMeasured(p->graph), it->second, 1e-6) << file.path();
  }
  EXPECT_EQ(profiles, 14);
}

}  // namespace
}  // namespace placement

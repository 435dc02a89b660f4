// placectl train end to end on a few tiny graphs (seconds): the weights, manifest, learning curve and chart it
// writes; bad inputs reported by file and skipped, or refused before the run; an interrupted run keeping its best
// checkpoint; placectl curve.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "client/learning_curve.h"
#include "tests/placectl_run.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using placement::testing::RunPlacectl;
using placement::testing::Slurp;
using ::testing::HasSubstr;

const std::string kSource = PLACEMENT_SOURCE_DIR;

// A fresh folder with three small generated graphs (and whatever a test adds), removed at the end.
class TrainDir {
 public:
  TrainDir() : path_(fs::temp_directory_path() / ("placectl_train_" + std::to_string(::getpid()) + "_" + Next())) {
    fs::create_directories(path_ / "graphs");
    for (int seed = 1; seed <= 3; ++seed) {
      const auto r =
          RunPlacectl("generate layered --ops " + std::to_string(20 + 10 * seed) + " --seed " + std::to_string(seed));
      EXPECT_EQ(r.exit_code, 0) << r.err;
      std::ofstream(path_ / "graphs" / ("layered" + std::to_string(seed) + ".json")) << r.out;
    }
  }
  ~TrainDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  static std::string Next() {
    static int n = 0;
    return std::to_string(n++);
  }
  fs::path path_;
};

constexpr char kQuick[] = " --devices 2xV100,4xV100 --iterations 30 --time_limit 0";

TEST(PlacectlTrain, TinyGraphsGiveWeightsWithAManifestAndALearningCurve) {
  TrainDir dir;
  const auto r = RunPlacectl("train " + (dir / "graphs") + kQuick + " --out " + (dir / "mine.pt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("30 iterations"));
  EXPECT_THAT(r.out, HasSubstr("on 4 training instances (2 graphs), validated on 2 (1 graphs)"));
  ASSERT_TRUE(fs::exists(dir / "mine.pt"));
  const nlohmann::json manifest = nlohmann::json::parse(Slurp(dir / "mine.json"));
  EXPECT_EQ(manifest["version"], "gnn-3-tuned");
  EXPECT_EQ(manifest["graphs"]["training"].size(), 2u);
  ASSERT_EQ(manifest["graphs"]["validation"].size(), 1u);
  EXPECT_EQ(manifest["graphs"]["validation"][0]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(manifest["clusters"][1]["source"], "4xV100");
  EXPECT_THAT(manifest["command"].get<std::string>(), HasSubstr("--iterations 30"));
  EXPECT_THAT(manifest["started_from"]["version"].get<std::string>(), HasSubstr("gnn-3+"));
  // The checkpoint is the best validation point, the start's included: never worse than the start.
  EXPECT_LE(manifest["validation"]["new"]["validation_ratio"].get<double>(),
            manifest["validation"]["start"]["validation_ratio"].get<double>());
  EXPECT_GT(manifest["validation"]["new"]["policy_placer_geomean_step_time_over_lower_bound"].get<double>(), 0);
  EXPECT_EQ(manifest["run"]["interrupted"], false);

  const absl::StatusOr<std::vector<placement::cli::CurveRow>> curve =
      placement::cli::ParseCurveTsv(Slurp(dir / "mine.tsv"));
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ(curve->back().iteration, 30);
  EXPECT_THAT(Slurp(dir / "mine.svg"), HasSubstr("<polyline"));

  // The weights serve: the policy placer names their version.
  const auto placed = RunPlacectl("place " + (dir / "graphs/layered1.json") +
                                  " --devices 2xV100 --algorithm policy "
                                  "--policy_weights " +
                                  (dir / "mine.pt") + " --output json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_THAT(placed.out, HasSubstr(manifest["loaded_version"].get<std::string>()));
}

TEST(PlacectlTrain, BadInputsAreReportedByFileAndSkipped) {
  TrainDir dir;
  std::ofstream(dir / "graphs/broken.onnx") << "not a model";
  // Devices with 1 MB of memory: no graph of the folder fits on them.
  const std::string tiny = dir / "tiny_memory.json";
  std::ofstream(tiny) << R"({"devices": [{"preset": "V100", "kind": "V100-1MB", "memory": 1000000, "count": 2}],)"
                      << R"( "links": {"bandwidth": "10GB/s", "latency": "5us"}})";
  const auto r = RunPlacectl("train " + (dir / "graphs") + kQuick + " --topology " + tiny + " --out " + (dir / "p.pt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("skipped " + (dir / "graphs/broken.onnx")));
  EXPECT_THAT(r.err, HasSubstr("layered1.json on " + tiny + ": its memory needs at least"));
  const nlohmann::json manifest = nlohmann::json::parse(Slurp(dir / "p.json"));
  EXPECT_EQ(manifest["skipped"].size(), 4u) << manifest["skipped"];  // the broken file, each graph on the tiny cluster

  // Refused before the run: a cluster that does not parse, a path that is not there, nothing readable.
  const auto bad_cluster = RunPlacectl("train " + (dir / "graphs") + " --devices 4xNoSuchGPU --out " + (dir / "q.pt"));
  EXPECT_EQ(bad_cluster.exit_code, 2);  // a flag value that does not parse: usage
  EXPECT_THAT(bad_cluster.err, HasSubstr("4xNoSuchGPU"));
  const auto missing = RunPlacectl("train " + (dir / "nowhere") + kQuick);
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr(dir / "nowhere"));
  const auto unreadable = RunPlacectl("train " + (dir / "graphs/broken.onnx") + kQuick + " --out " + (dir / "q.pt"));
  EXPECT_EQ(unreadable.exit_code, 3);
  EXPECT_THAT(unreadable.err, HasSubstr("no graph could be read"));
  EXPECT_FALSE(fs::exists(dir / "q.pt"));
}

TEST(PlacectlTrain, InterruptedRunKeepsItsBestCheckpoint) {
  TrainDir dir;
  const std::string out = dir / "interrupted.pt";
  const std::string log = dir / "train.log";
  // placectl execs placectl-torch in its own process: the pid stays the one signalled.
  const std::string graphs = dir / "graphs";
  const char* argv[] = {PLACECTL_PATH,  "train", graphs.c_str(), "--devices", "2xV100",
                        "--time_limit", "120s",  "--out",        out.c_str(), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, PLACECTL_PATH, &files, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&files);
  // The first checkpoint (the start weights' validation point) is written before the first iteration.
  for (int i = 0; i < 600 && !fs::exists(out); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(out)) << Slurp(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << Slurp(log);
  EXPECT_EQ(WEXITSTATUS(status), 0) << Slurp(log);
  EXPECT_THAT(Slurp(log), HasSubstr("interrupted: "));
  const nlohmann::json manifest = nlohmann::json::parse(Slurp(dir / "interrupted.json"));
  EXPECT_EQ(manifest["run"]["interrupted"], true);
  EXPECT_LT(manifest["run"]["seconds"].get<double>(), 100);
  const auto placed = RunPlacectl("place " + (dir / "graphs/layered2.json") +
                                  " --devices 2xV100 --algorithm policy "
                                  "--policy_weights " +
                                  out);
  EXPECT_EQ(placed.exit_code, 0) << placed.err;
}

TEST(PlacectlCurve, DrawsTheShippedLearningCurve) {
  TrainDir dir;
  const auto r = RunPlacectl("curve " + kSource + "/docs/policy_learning_curve.tsv " + (dir / "curve.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string svg = Slurp(dir / "curve.svg");
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("greedy / scheduled (validation)"));
  EXPECT_THAT(svg, HasSubstr("sampled (training)"));
  std::ofstream(dir / "bad.tsv") << "phase\titeration\n1\t2\n";
  const auto bad = RunPlacectl("curve " + (dir / "bad.tsv") + " " + (dir / "bad.svg"));
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_THAT(bad.err, HasSubstr("line 2"));
}

TEST(LearningCurve, TsvRoundTripsAndImitationGetsItsBoundary) {
  std::vector<placement::cli::CurveRow> rows = {{"imitation", 0, 0, 1, 1, 1.3, 2.0},
                                                {"imitation", 100, 1, 0.5, 0.9, 1.3, 1.6},
                                                {"reinforce", 200, 2, 0.1, 0.5, 1.4, 1.4}};
  const absl::StatusOr<std::vector<placement::cli::CurveRow>> back =
      placement::cli::ParseCurveTsv(placement::cli::CurveTsv(rows));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[2].iteration, 200);
  EXPECT_DOUBLE_EQ((*back)[1].validation_ratio, 1.6);
  const absl::StatusOr<std::string> svg = placement::cli::CurveSvg(rows);
  ASSERT_TRUE(svg.ok());
  EXPECT_THAT(*svg, HasSubstr("imitation | reinforcement"));
  EXPECT_THAT(*svg, HasSubstr("demonstrations (training)"));
  EXPECT_FALSE(placement::cli::CurveSvg({rows[0]}).ok());  // nothing past iteration 0
}

}  // namespace

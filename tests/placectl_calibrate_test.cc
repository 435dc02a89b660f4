// placectl calibrate end to end: the real binary timing this host or reading recorded measurements, refit on
// real torch.profiler traces (tests/data/torch_trace), and the topology it writes placing a model.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/torch_trace.h"
#include "tests/placectl_run.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Result = placement::testing::PlacectlResult;
using placement::testing::RunPlacectl;

const std::string kSource = PLACEMENT_SOURCE_DIR;

// A profile folder as scripts/profile_model.py writes it, its model.onnx and trace.json linked to `onnx` and
// `trace`: its path, for --profiles.
std::string ProfileFolder(const fs::path& folder, const std::string& onnx, const std::string& trace) {
  fs::create_directories(folder);
  fs::create_symlink(onnx, folder / "model.onnx");
  fs::create_symlink(trace, folder / "trace.json");
  return folder.string();
}

// The trace at `path` with the events named `name` (every event, where empty) taking four times as long, written
// to `out`: a step or a round recorded while the host ran slow.
void WriteSlowedTrace(const std::string& path, const std::string& name, const fs::path& out) {
  nlohmann::json slow = nlohmann::json::parse(placement::testing::Slurp(path));
  for (nlohmann::json& e : slow.is_array() ? slow : slow["traceEvents"]) {
    if (e.contains("dur") && (name.empty() || e.value("name", "") == name)) e["dur"] = 4 * e["dur"].get<double>();
  }
  std::ofstream(out) << slow.dump();
}

TEST(PlacectlCalibrate, WritesAOneDeviceTopologyThatPlaceTakes) {
  const fs::path topology = fs::temp_directory_path() / ("placectl_calibrated_" + std::to_string(getpid()) + ".json");
  const std::string data = kSource + "/tests/data/torch_trace/";
  // A profile folder made of the real trace in tests/data.
  const fs::path profile = fs::temp_directory_path() / ("placectl_profile_" + std::to_string(getpid()));
  ProfileFolder(profile, data + "resnet18_b1.onnx", data + "resnet18_b1_cpu1.trace.json");
  // And a training step's (forward, backward by autograd function, Adam), its events those the fit reads.
  const fs::path training = fs::temp_directory_path() / ("placectl_training_profile_" + std::to_string(getpid()));
  ProfileFolder(training, data + "resnet18_b1_train.onnx", data + "resnet18_b1_train_cpu1.trace.json");
  // Short measurements: this checks the command, not the host; the fidelity benchmark checks the figures.
  const std::string profiles = " --profiles " + profile.string() + "," + training.string();
  const std::string saved = topology.string() + ".measured", refit = topology.string() + ".refit";
  Result calibrated = RunPlacectl("calibrate --threads 1 --measure_seconds 0.002 --output " + topology.string() +
                                  profiles + " --save_measurements " + saved);
  // What was timed, kept: the same profiles refit it to the same topology, with nothing timed again.
  Result refitted = RunPlacectl("calibrate --measurements " + saved + " --output " + refit + profiles);
  Result placed = RunPlacectl("place " + data +
                              "resnet18_b1.onnx --algorithm single_device --output json "
                              "--topology " +
                              topology.string());
  // The fit from benchmarks recorded (in tests/data) on a host like the traces', not this run's short, shared-host
  // ones: what the step predicts back to depends on no machine.
  const std::string recorded = topology.string() + ".recorded";
  Result recorded_fit =
      RunPlacectl("calibrate --measurements " + data + "host_cpu1.measurements.json --output " + recorded + profiles);
  Result benchmarks_only =
      RunPlacectl("calibrate --measurements " + data + "host_cpu1.measurements.json --output " + recorded + ".bench");
  const nlohmann::json recorded_device = nlohmann::json::parse(placement::testing::Slurp(recorded))["devices"][0];
  const nlohmann::json benchmark_device =
      nlohmann::json::parse(placement::testing::Slurp(recorded + ".bench"))["devices"][0];
  Result placed_step = RunPlacectl("place " + data +
                                   "resnet18_b1_train.onnx --training --optimizer adam --algorithm single_device "
                                   "--output json --topology " +
                                   recorded);
  fs::remove_all(profile);
  fs::remove_all(training);
  Result no_threads = RunPlacectl("calibrate --threads 0");
  Result no_profile = RunPlacectl("calibrate --measure_seconds 0.002 --profiles /nonexistent/profile");
  const std::string written = placement::testing::Slurp(topology), refit_written = placement::testing::Slurp(refit);
  fs::remove(topology);
  fs::remove(saved);
  fs::remove(refit);
  fs::remove(recorded);
  fs::remove(recorded + ".bench");
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  ASSERT_EQ(refitted.exit_code, 0) << refitted.err;
  EXPECT_EQ(refit_written, written);
  EXPECT_THAT(calibrated.out, HasSubstr("peak"));
  EXPECT_THAT(calibrated.out, HasSubstr("thin_conv"));
  EXPECT_THAT(calibrated.out, HasSubstr("use it as --topology"));
  // The profile's scoped operators (those with a measurable share) refit the overhead and the conv class.
  EXPECT_THAT(calibrated.out, HasSubstr("profiled operators"));
  EXPECT_THAT(calibrated.out, HasSubstr("per operator (benchmark"));
  EXPECT_THAT(calibrated.out, HasSubstr(" conv "));
  EXPECT_THAT(calibrated.out, HasSubstr("training fitted on 1 profiled step(s)"));
  EXPECT_THAT(calibrated.out, HasSubstr("conv backward"));
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  const nlohmann::json answer = nlohmann::json::parse(placed.out);
  EXPECT_GT(answer["value"].get<double>(), 0);
  // The fit reproduces what it was fitted on: the training factors sit on top of the forward efficiencies fitted
  // from the inference profile, so the profiled step predicts back at its measured time. The optimizer keeps the
  // benchmark's efficiency (its profiled ranges run slow), which with the recorded benchmarks adds 6% to this step.
  ASSERT_EQ(recorded_fit.exit_code, 0) << recorded_fit.err;
  // resnet18's 20 convolutions, from 12.8 MFLOP to 236: enough spread to fit their bytes' time of their own.
  EXPECT_THAT(recorded_fit.out, HasSubstr("conv 0.988 (benchmarks 0.839) and its bytes at 3.34 GB/s"));
  // Its 48 such operators less the eight residual Adds, which sit in their BasicBlock's own scope: timed with the
  // block's Python forward, they are left out of the fit.
  EXPECT_THAT(recorded_fit.out, HasSubstr("fitted on 40 profiled operators"));
  // The trace times its one view, the Flatten, at 0.56 ms (a dispatch, not 2 KB at a bandwidth): views keep the
  // benchmarks' figure rather than one 1000 times slower.
  ASSERT_EQ(benchmarks_only.exit_code, 0) << benchmarks_only.err;
  EXPECT_DOUBLE_EQ(recorded_device["efficiency"]["view"].get<double>(),
                   benchmark_device["efficiency"]["view"].get<double>());
  ASSERT_EQ(placed_step.exit_code, 0) << placed_step.err;
  const absl::StatusOr<placement::ModuleTimes> trace =
      placement::ParseTorchTrace(placement::testing::Slurp(data + "resnet18_b1_train_cpu1.trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_NEAR(nlohmann::json::parse(placed_step.out)["value"].get<double>() / trace->step_seconds, 1.0, 0.1);
  EXPECT_EQ(no_threads.exit_code, 2);  // a usage error
  EXPECT_THAT(no_threads.err, HasSubstr("--threads 0 is not a positive count"));
  EXPECT_NE(no_profile.exit_code, 0);
  EXPECT_THAT(no_profile.err, HasSubstr("/nonexistent/profile/model.onnx"));
}

// The training fit takes each family's factor as the median over the profiled steps: one step recorded slow (here
// its convolutions' backward ranges four times as long, as a busy host or the profiler's own allocations once made
// a large model's Adam step) leaves the fitted figures as they were.
TEST(PlacectlCalibrate, TrainingFitIsUnmovedByOneSlowStep) {
  const fs::path dir = fs::temp_directory_path() / ("placectl_slow_step_" + std::to_string(getpid()));
  const std::string data = kSource + "/tests/data/torch_trace/";
  std::ofstream(dir.string() + ".measured.json")
      << R"({"device": {"name": "Test CPU", "kind": "cpu", "memory_bytes": 2e10}, "peak_flops": 1e11,
      "memory_bandwidth": 2e10, "launch_overhead": 1e-6, "lines": [
      {"op_class": "conv", "layer": "conv", "flops": 1.85e9, "bytes": 1.3e7, "forward_seconds": 2e-2,
       "backward_seconds": 4e-2, "backward_ops": 2}]})";
  fs::create_directories(dir);
  const std::string train_trace = data + "resnet18_b1_train_cpu1.trace.json", slow = (dir / "slow.json").string();
  WriteSlowedTrace(train_trace, "autograd::engine::evaluate_function: ConvolutionBackward0", slow);
  const std::string folders =
      ProfileFolder(dir / "inference", data + "resnet18_b1.onnx", data + "resnet18_b1_cpu1.trace.json") + "," +
      ProfileFolder(dir / "train_a", data + "resnet18_b1_train.onnx", train_trace) + "," +
      ProfileFolder(dir / "train_b", data + "resnet18_b1_train.onnx", train_trace) + "," +
      ProfileFolder(dir / "train_slow", data + "resnet18_b1_train.onnx", slow);
  const std::string measured = " --measurements " + dir.string() + ".measured.json --profiles ";
  const std::string without_slow = folders.substr(0, folders.rfind(','));
  Result two = RunPlacectl("calibrate" + measured + without_slow + " --output " + (dir / "two.json").string());
  Result three = RunPlacectl("calibrate" + measured + folders + " --output " + (dir / "three.json").string());
  const std::string two_json = placement::testing::Slurp(dir / "two.json");
  const std::string three_json = placement::testing::Slurp(dir / "three.json");
  fs::remove_all(dir);
  fs::remove(dir.string() + ".measured.json");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_THAT(three.out, HasSubstr("training fitted on 3 profiled step(s)"));
  EXPECT_THAT(three.out, HasSubstr("optimizer 1 kept"));  // the benchmarks' (here none: the plain roofline)
  const nlohmann::json a = nlohmann::json::parse(two_json)["devices"][0];
  const nlohmann::json b = nlohmann::json::parse(three_json)["devices"][0];
  EXPECT_DOUBLE_EQ(a["backward_efficiency"]["conv"].get<double>(), b["backward_efficiency"]["conv"].get<double>());
}

// Profiles of one model recorded in several rounds count once, each operator at the median of its rounds' times:
// a round recorded while the host ran four times slower leaves the fit as the other two give it.
TEST(PlacectlCalibrate, InferenceFitIsUnmovedByOneSlowRound) {
  const fs::path dir = fs::temp_directory_path() / ("placectl_slow_round_" + std::to_string(getpid()));
  const std::string data = kSource + "/tests/data/torch_trace/";
  fs::create_directories(dir);
  const std::string onnx = data + "resnet18_b1.onnx", trace = data + "resnet18_b1_cpu1.trace.json";
  const std::string slow = (dir / "slow.json").string();
  WriteSlowedTrace(trace, "", slow);
  const std::string round_a = ProfileFolder(dir / "round_a", onnx, trace);
  const std::string folders =
      round_a + "," + ProfileFolder(dir / "round_b", onnx, trace) + "," + ProfileFolder(dir / "round_slow", onnx, slow);
  const std::string measured = " --measurements " + data + "host_cpu1.measurements.json --profiles ";
  Result one = RunPlacectl("calibrate" + measured + round_a + " --output " + (dir / "one.json").string());
  Result three = RunPlacectl("calibrate" + measured + folders + " --output " + (dir / "three.json").string());
  Result two = RunPlacectl("calibrate" + measured + round_a + "," + (dir / "round_slow").string() + " --output " +
                           (dir / "two.json").string());
  const std::string one_json = placement::testing::Slurp(dir / "one.json");
  const std::string three_json = placement::testing::Slurp(dir / "three.json");
  const std::string two_json = placement::testing::Slurp(dir / "two.json");
  fs::remove_all(dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(three.exit_code, 0) << three.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(three_json, one_json);
  // Of two rounds the median is their geometric mean: there the slow one does move the fit.
  const double fast = nlohmann::json::parse(one_json)["devices"][0]["launch_overhead"].get<double>();
  const double between = nlohmann::json::parse(two_json)["devices"][0]["launch_overhead"].get<double>();
  EXPECT_GT(between, fast);
}

TEST(PlacectlCalibrate, TakesADeviceMeasuredElsewhere) {
  const fs::path dir = fs::temp_directory_path() / ("placectl_measurements_" + std::to_string(getpid()));
  fs::create_directories(dir);
  // What scripts/measure_torch_device.py writes on a GPU, cut to three layers.
  std::ofstream(dir / "gpu.json") << R"({"device": {"name": "NVIDIA Test GPU", "kind": "TestGPU", "memory_bytes": 8e10},
      "torch": "2.11.0", "peak_flops": 5e13, "memory_bandwidth": 4e12, "launch_overhead": 5e-6, "lines": [
      {"op_class": "conv", "layer": "conv", "flops": 1.85e9, "bytes": 1.3e7, "forward_seconds": 7e-5,
       "backward_seconds": 2e-4, "backward_ops": 2},
      {"op_class": "normalization", "layer": "batchnorm", "flops": 8e6, "bytes": 1.3e7, "forward_seconds": 1.5e-5},
      {"op_class": "elementwise", "layer": "relu", "flops": 1.6e6, "bytes": 1.3e7, "forward_seconds": 1.2e-5}]})";
  std::ofstream(dir / "broken.json") << R"({"device": {"kind": "TestGPU", "memory_bytes": 1}, "lines": []})";
  const std::string topology = (dir / "gpu_topology.json").string();
  Result calibrated = RunPlacectl("calibrate --measurements " + (dir / "gpu.json").string() + " --output " + topology);
  Result placed = RunPlacectl("place " + kSource +
                              "/tests/data/torch_trace/resnet18_b1.onnx --algorithm single_device --output json "
                              "--topology " +
                              topology);
  Result broken = RunPlacectl("calibrate --measurements " + (dir / "broken.json").string());
  // The same device timed three times: each figure the median; a file of another device is named.
  const std::string gpu = (dir / "gpu.json").string(), topology3 = (dir / "gpu_topology3.json").string();
  Result thrice = RunPlacectl("calibrate --measurements " + gpu + "," + gpu + "," + gpu + " --output " + topology3);
  Result with_broken = RunPlacectl("calibrate --measurements " + gpu + "," + (dir / "broken.json").string());
  const std::string once_json = placement::testing::Slurp(topology), thrice_json = placement::testing::Slurp(topology3);
  fs::remove_all(dir);
  ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
  EXPECT_THAT(calibrated.out, HasSubstr("NVIDIA Test GPU, PyTorch 2.11.0: peak"));
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_GT(nlohmann::json::parse(placed.out)["value"].get<double>(), 0);
  EXPECT_EQ(broken.exit_code, 3);
  EXPECT_THAT(broken.err, HasSubstr("broken.json: peak_flops: is required"));
  ASSERT_EQ(thrice.exit_code, 0) << thrice.err;
  EXPECT_THAT(thrice.out, HasSubstr("median of 3 timings"));
  EXPECT_EQ(nlohmann::json::parse(thrice_json)["devices"][0]["efficiency"],
            nlohmann::json::parse(once_json)["devices"][0]["efficiency"]);
  EXPECT_EQ(with_broken.exit_code, 3);
  EXPECT_THAT(with_broken.err, HasSubstr("broken.json: peak_flops: is required"));
}

}  // namespace

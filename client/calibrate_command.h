// placectl calibrate: measures this host (or reads a device's measurements) and writes a topology with one
// device that --topology takes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace placement::cli {

struct CalibrateOptions {
  int threads = 1;
  std::string kind = "cpu";
  std::string output;  // a file for the topology; empty: print it
  // Folders written by scripts/profile_model.py (model.onnx and trace.json, recorded on this host with the same
  // threads): each operator class with enough profiled time there gets its efficiency from those operators'
  // measured times instead of from the benchmark layers.
  std::vector<std::string> profiles;
  double seconds_per_measurement = 0.05;
  // The JSON scripts/measure_torch_device.py wrote where the device is (a GPU): calibrate from it instead of
  // timing this host; threads and seconds_per_measurement are then unused.
  std::string measurements;
  // A file for what was measured, in the form `measurements` reads: the same calibration refit later (other
  // profiles) without timing the device again. Empty: not written.
  std::string save_measurements;
};

// With an output file: writes the topology there and returns the report (every benchmark layer with its FLOPs,
// bytes, times and share of the roofline, and the efficiencies they imply). Without: returns the topology
// JSON and writes the report to stderr.
absl::StatusOr<std::string> RunCalibrate(const CalibrateOptions& options);

}  // namespace placement::cli

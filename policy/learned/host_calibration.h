// Measures this host as a placement device: what `placectl calibrate` runs. LibTorch's own CPU kernels (the
// ones a model run by PyTorch or LibTorch on this host executes) are timed on representative layer shapes;
// each figure is what the cost model (graph/cost_model.h) needs:
//
//   peak_flops        a large float32 GEMM;
//   memory_bandwidth  a large tensor copy (bytes read plus bytes written);
//   launch_overhead   an operator on one-element tensors: dispatch, not work;
//   lines             each benchmark layer's forward and backward time, from which graph/calibration.h derives
//                     the efficiencies per operator class.
//
// Lives beside the learned policy because it is the other code that runs LibTorch; its interface carries no
// LibTorch type.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/calibration.h"

namespace placement::learned {

struct CalibrationOptions {
  int threads = 1;                        // intra-op threads, as torch.set_num_threads
  double seconds_per_measurement = 0.05;  // each layer is repeated for at least this long, best of three
  std::string kind = "cpu";               // the device kind written, which measured costs (--costs_kind) name
};

// INTERNAL when LibTorch fails (the message names the layer).
absl::StatusOr<Calibration> CalibrateHost(const CalibrationOptions& options);

}  // namespace placement::learned

// Measures this host as a placement device: what `placectl calibrate` runs. LibTorch's own CPU kernels (the
// ones a model run by PyTorch or LibTorch on this host executes) are timed on representative layer shapes;
// each figure is what the cost model (graph/cost_model.h) needs:
//
//   peak_flops        a large float32 GEMM;
//   memory_bandwidth  a large tensor copy (bytes read plus bytes written);
//   launch_overhead   an operator on one-element tensors: dispatch, not work;
//   efficiency        per operator class (graph/op_class.h): the roofline time of its benchmark layers, counted
//                     the way the ONNX importer counts FLOPs and bytes, over their measured time less the
//                     launch overhead;
//   backward_efficiency  per class: a training step's backward modelled as 2x the forward's work, over the
//                     measured backward time of the same layers.
//
// Lives beside the learned policy because it is the other code that runs LibTorch; its interface carries no
// LibTorch type.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/topology.h"

namespace placement::learned {

struct CalibrationOptions {
  int threads = 1;                        // intra-op threads, as torch.set_num_threads
  double seconds_per_measurement = 0.05;  // each layer is repeated for at least this long, best of three
  std::string kind = "cpu";               // the device kind written, which measured costs (--costs_kind) name
};

struct CalibrationLine {  // one benchmark layer, for the report
  std::string op_class;
  std::string layer;
  double flops = 0;
  double bytes = 0;
  double forward_seconds = 0;
  double backward_seconds = 0;  // 0 when not measured
};

struct Calibration {
  Device device;
  std::vector<CalibrationLine> lines;
};

// INTERNAL when LibTorch fails (the message names the layer).
absl::StatusOr<Calibration> CalibrateHost(const CalibrationOptions& options);

}  // namespace placement::learned

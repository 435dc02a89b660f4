// Measured times from a PyTorch profiler trace (torch.profiler's Chrome-trace JSON) of the model that was
// exported, matched to the exported graph's operators by module scope.
//
// scripts/profile_model.py records the trace with every module call wrapped in a range named
// "module:<path>#<call>" ("module:layer1.0.relu#2", the third call of that module in one forward; the model
// itself is "module:#0"). A module's self time (its range less the ranges of the modules it calls), averaged
// over the profiled steps (ProfilerStep#N), is the time of the ONNX operators the exporter put directly in that
// module's scope: torch's exporter names a node "/layer1/layer1.0/relu_2/Relu", whose scope leads back to the
// module path "layer1.0.relu" and, by the "_2", its third call. Where one module holds several operators (a
// Linear as MatMul and Add), its time is shared by their FLOPs (by bytes where none has FLOPs).
//
// A training step's backward ranges ("autograd::engine::evaluate_function: ConvolutionBackward0") and the
// optimizer's ("Optimizer.step#Adam.step", "Optimizer.zero_grad#...") are timed the same way, by function.
//
// A trace recorded on a GPU has device work (Kineto's "kernel", "gpu_memcpy" events) tied by a correlation id to
// the host's launch ("cuda_runtime"): there a module's time is that of the kernels launched from its own scope,
// not the host time of queueing them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/measured_costs.h"

namespace placement {

struct ModuleTimes {
  std::map<std::string, double> self_seconds;  // "layer1.0.relu#2" -> mean self time per profiled step
  // A training step's backward, by autograd function ("ConvolutionBackward0" -> mean seconds per profiled step,
  // all its calls together): torch's trace names the function each backward range evaluates, not the module
  // whose gradient it computes.
  std::map<std::string, double> backward_seconds;
  double optimizer_seconds = 0;  // mean per step of the optimizer's step and zero_grad ranges
  int steps = 0;                               // ProfilerStep ranges (1 when the trace has none)
  double step_seconds = 0;                     // their mean duration (0 when the trace has none)
};

// A JSON array of trace events, or an object with "traceEvents" (torch and Kineto write either).
bool LooksLikeTorchTrace(absl::string_view text);

// INVALID_ARGUMENT for text that is not such a trace, an event without a name, start or duration, or a trace
// with no "module:" range (recorded without scripts/profile_model.py's annotations).
absl::StatusOr<ModuleTimes> ParseTorchTrace(absl::string_view text);

// Times for the graph's forward operators, on device kind `kind` ("*" for every kind). `warnings` gets how many
// operators had no module in the trace (left to the cost model).
MeasuredCosts MatchModuleTimes(const Graph& graph, const ModuleTimes& times, const std::string& kind,
                               std::vector<std::string>* warnings);

}  // namespace placement

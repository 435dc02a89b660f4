#include "client/memory_command.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/exit_codes.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "graph/units.h"
#include "nlohmann/json.hpp"
#include "simulator/memory_breakdown.h"
#include "simulator/simulator.h"

namespace placement::cli {
namespace {

struct Breakdown {
  MemoryBreakdown memory;
  int64_t peak = 0;
  int64_t capacity = 0;  // 0: unlimited
  std::string device;
  std::string kind;
  std::vector<std::string> warnings;
  bool batchable = false;       // an ONNX model, whose batch the command line binds
  int64_t batch_that_fits = 0;  // when it does not fit: the largest batch that does (0: none found)
  int64_t devices_needed = 0;   // when even one sample does not fit: devices of this capacity it needs at least
};

// The step with every operator on the cluster's first device: its simulated peak and what it holds by kind, as a
// placement's answer gives them.
absl::Status MeasureOnOneDevice(const Graph& step, const Topology& topology, Breakdown* b) {
  absl::StatusOr<CostModel> costs = CostModel::Create(step, topology);
  if (!costs.ok()) return costs.status();
  Placement placement;
  placement.device.assign(step.num_ops(), 0);
  absl::StatusOr<SimulationResult> result = Simulate(*costs, placement);
  if (!result.ok()) return result.status();
  b->peak = result->devices[0].peak_memory;
  b->memory = BreakDownMemory(step, placement, topology.num_devices(), {b->peak})[0];
  return absl::OkStatus();
}

std::string Table(const MemoryOptions& o, const Breakdown& b) {
  auto line = [](absl::string_view what, int64_t bytes, absl::string_view why) {
    return absl::StrFormat("  %-12s %12s  %s\n", what, FormatBytes(static_cast<double>(bytes)), why);
  };
  std::string out =
      absl::StrCat("memory of one ", o.load.training ? "training" : "inference", " step of ", o.graph_path, " on ",
                   b.device, " (batch ", std::max<int64_t>(o.load.batch, 1),
                   o.load.training ? absl::StrCat(", ", o.load.optimizer) : "", ", ", o.load.precision, ")\n");
  out += line("parameters", b.memory.parameters, "weights, resident");
  if (o.load.training) {
    out += line("gradients", b.memory.gradients, "one per parameter, made by the backward");
    out += line("optimizer", b.memory.optimizer, "the optimizer's state per parameter");
    out += line("activations", b.memory.activations, "what autograd saves for the backward");
  } else {
    out += line("activations", b.memory.activations, "the largest live set under no_grad");
  }
  out += line("workspace", b.memory.workspace, "the largest operator's scratch");
  out += line("peak", b.peak, "simulated: all of it as it lives and dies in the step");
  if (b.capacity > 0) {
    out += absl::StrCat("  ", b.peak <= b.capacity ? "fits" : "does not fit", " in ", FormatBytes(b.capacity), " of ",
                        b.device, " (", absl::StrFormat("%.0f%%", 100.0 * b.peak / b.capacity), ")\n");
  }
  if (b.batch_that_fits > 0) {
    absl::StrAppend(&out, "  to fit: --batch ", b.batch_that_fits, " (the largest batch whose step fits one ", b.device,
                    "), or split the step over several devices with placectl place\n");
  } else if (b.devices_needed > 0) {
    absl::StrAppend(&out, "  to fit: one sample alone needs more than one ", b.device,
                    "; split the step over at least ", b.devices_needed, " such devices (placectl place ", o.graph_path,
                    " --devices ", b.devices_needed, "x", b.kind, ")\n");
  }
  for (const std::string& w : b.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string Json(const MemoryOptions& o, const Breakdown& b) {
  nlohmann::json j;
  j["graph"] = o.graph_path;
  j["mode"] = o.load.training ? "training" : "inference";
  j["batch"] = std::max<int64_t>(o.load.batch, 1);
  j["precision"] = o.load.precision;
  j["device"] = b.device;
  j["memory"] = {{"parameters", b.memory.parameters},
                 {"gradients", b.memory.gradients},
                 {"optimizer", b.memory.optimizer},
                 {"activations", b.memory.activations},
                 {"workspace", b.memory.workspace}};
  j["peak_memory"] = b.peak;
  j["capacity"] = b.capacity;
  j["fits"] = b.capacity == 0 || b.peak <= b.capacity;
  j["warnings"] = b.warnings;
  if (b.batch_that_fits > 0) j["batch_that_fits"] = b.batch_that_fits;
  if (b.devices_needed > 0) j["devices_needed"] = b.devices_needed;
  return j.dump(2) + "\n";
}

// One step's memory at `batch` (0: the graph's own, or the importer's default).
absl::StatusOr<Breakdown> MeasureAt(const MemoryOptions& o, int64_t batch) {
  GraphLoadOptions load = o.load;
  load.batch = batch;
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(o.graph_path, load);  // the step, as place would run it
  if (!loaded.ok()) return loaded.status();
  const std::string devices = o.devices.empty() && o.topology_file.empty() ? "1xH100" : o.devices;
  absl::StatusOr<Topology> topology =
      ResolveTopology(loaded->problem, o.topology_file, devices, o.load.runtime, o.load.precision);
  if (!topology.ok()) return topology.status();

  Breakdown b;
  b.warnings = loaded->warnings;
  b.batchable = loaded->format == "onnx" || loaded->format == "hf_config";
  b.device = topology->devices()[0].name;
  b.kind = topology->devices()[0].kind;
  b.capacity = topology->devices()[0].memory_bytes;
  if (absl::Status s = MeasureOnOneDevice(loaded->problem.graph, *topology, &b); !s.ok()) return s;
  return b;
}

// For a step that does not fit: the largest batch that does, from the peak's growth per sample (the activations
// grow with the batch, the weights and the optimizer's state do not), checked by measuring it; or, where even one
// sample does not fit, how many such devices the step needs at least.
absl::Status SuggestAFit(const MemoryOptions& o, Breakdown* b) {
  const int64_t batch = std::max<int64_t>(o.load.batch, 1);
  absl::StatusOr<Breakdown> one = batch > 1 && b->batchable ? MeasureAt(o, 1) : *b;
  if (!one.ok()) return one.status();
  if (one->peak > b->capacity) {
    b->devices_needed = (one->peak + b->capacity - 1) / b->capacity;
    return absl::OkStatus();
  }
  const double per_sample = static_cast<double>(b->peak - one->peak) / static_cast<double>(batch - 1);
  int64_t guess = per_sample > 0 ? 1 + static_cast<int64_t>((b->capacity - one->peak) / per_sample) : 1;
  guess = std::clamp<int64_t>(guess, 1, batch - 1);
  for (int tries = 0; tries < 8 && guess > 1; ++tries) {  // the growth is close to linear: a step or two back
    absl::StatusOr<Breakdown> at = MeasureAt(o, guess);
    if (!at.ok()) return at.status();
    if (at->peak <= b->capacity) break;
    guess = std::max<int64_t>(1, guess - std::max<int64_t>(1, guess / 16));
  }
  b->batch_that_fits = guess;
  return absl::OkStatus();
}

// The step at the requested batch and, when it does not fit, what would.
absl::StatusOr<Breakdown> MeasureAndSuggest(const MemoryOptions& o) {
  absl::StatusOr<Breakdown> b = MeasureAt(o, o.load.batch);
  if (!b.ok()) return b.status();
  if (b->capacity > 0 && b->peak > b->capacity) {
    if (absl::Status s = SuggestAFit(o, &*b); !s.ok()) return s;
  }
  return b;
}

}  // namespace

absl::StatusOr<OneDeviceFit> FitOnOneDevice(const MemoryOptions& o) {
  absl::StatusOr<Breakdown> b = MeasureAndSuggest(o);
  if (!b.ok()) return b.status();
  return OneDeviceFit{b->peak, b->capacity, b->kind, b->batch_that_fits, b->devices_needed};
}

absl::StatusOr<std::string> RunMemory(const MemoryOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return UsageError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  absl::StatusOr<Breakdown> b = MeasureAndSuggest(o);
  if (!b.ok()) return b.status();
  return o.output == "json" ? Json(o, *b) : Table(o, *b);
}

}  // namespace placement::cli

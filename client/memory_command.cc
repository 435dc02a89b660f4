#include "client/memory_command.h"

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "graph/saved_tensors.h"
#include "graph/training.h"
#include "graph/units.h"
#include "nlohmann/json.hpp"
#include "simulator/simulator.h"

namespace placement::cli {
namespace {

struct Breakdown {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizer = 0;
  int64_t activations = 0;
  int64_t workspace = 0;
  int64_t peak = 0;
  int64_t capacity = 0;  // 0: unlimited
  std::string device;
};

int StateCopies(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return 0;
    case Optimizer::kMomentum:
      return 1;
    case Optimizer::kAdam:
      return 2;
  }
  return 0;
}

// The step's simulated peak with every operator on the cluster's first device.
absl::StatusOr<int64_t> PeakOnOneDevice(const Graph& step, const Topology& topology) {
  absl::StatusOr<CostModel> costs = CostModel::Create(step, topology);
  if (!costs.ok()) return costs.status();
  Placement placement;
  placement.device.assign(step.num_ops(), 0);
  absl::StatusOr<SimulationResult> result = Simulate(*costs, placement);
  if (!result.ok()) return result.status();
  return result->devices[0].peak_memory;
}

std::string Table(const MemoryOptions& o, const Breakdown& b) {
  auto line = [](absl::string_view what, int64_t bytes, absl::string_view why) {
    return absl::StrFormat("  %-12s %12s  %s\n", what, FormatBytes(static_cast<double>(bytes)), why);
  };
  std::string out = absl::StrCat("memory of one ", o.load.training ? "training" : "inference", " step of ",
                                 o.graph_path, " on ", b.device, " (batch ", std::max<int64_t>(o.load.batch, 1),
                                 o.load.training ? absl::StrCat(", ", o.load.optimizer) : "", ")\n");
  out += line("parameters", b.parameters, "weights, resident");
  if (o.load.training) {
    out += line("gradients", b.gradients, "one per parameter, made by the backward");
    out += line("optimizer", b.optimizer, "the optimizer's state per parameter");
    out += line("activations", b.activations, "what autograd saves for the backward");
  } else {
    out += line("activations", b.activations, "the largest live set under no_grad");
  }
  out += line("workspace", b.workspace, "the largest operator's scratch");
  out += line("peak", b.peak, "simulated: all of it as it lives and dies in the step");
  if (b.capacity > 0) {
    out += absl::StrCat("  ", b.peak <= b.capacity ? "fits" : "does not fit", " in ", FormatBytes(b.capacity),
                        " of ", b.device, " (", absl::StrFormat("%.0f%%", 100.0 * b.peak / b.capacity), ")\n");
  }
  return out;
}

std::string Json(const MemoryOptions& o, const Breakdown& b) {
  nlohmann::json j;
  j["graph"] = o.graph_path;
  j["mode"] = o.load.training ? "training" : "inference";
  j["batch"] = std::max<int64_t>(o.load.batch, 1);
  j["device"] = b.device;
  j["memory"] = {{"parameters", b.parameters}, {"gradients", b.gradients}, {"optimizer", b.optimizer},
                 {"activations", b.activations}, {"workspace", b.workspace}};
  j["peak_memory"] = b.peak;
  j["capacity"] = b.capacity;
  j["fits"] = b.capacity == 0 || b.peak <= b.capacity;
  return j.dump(2) + "\n";
}

}  // namespace

absl::StatusOr<std::string> RunMemory(const MemoryOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  GraphLoadOptions forward_load = o.load;
  forward_load.training = false;
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(o.graph_path, forward_load);
  if (!loaded.ok()) return loaded.status();
  const std::string devices = o.devices.empty() && o.topology_file.empty() ? "1xH100" : o.devices;
  absl::StatusOr<Topology> topology = ResolveTopology(loaded->problem, o.topology_file, devices);
  if (!topology.ok()) return topology.status();
  const Graph& forward = loaded->problem.graph;

  Breakdown b;
  b.device = topology->devices()[0].name;
  b.capacity = topology->devices()[0].memory_bytes;
  b.parameters = forward.total_param_bytes();
  Graph step = forward;
  if (o.load.training) {
    absl::StatusOr<Optimizer> optimizer = ParseOptimizer(o.load.optimizer);
    if (!optimizer.ok()) return optimizer.status();
    TrainingOptions training;
    training.optimizer = *optimizer;
    training.backward_multiplier = o.load.backward_multiplier;
    absl::StatusOr<Graph> built = BuildTrainingGraph(forward, training);
    if (!built.ok()) return built.status();
    step = *std::move(built);
    b.gradients = b.parameters;
    b.optimizer = StateCopies(*optimizer) * b.parameters;
    b.activations = PlanSavedTensors(forward).TotalBytes(forward);
  }
  for (OpId u = 0; u < step.num_ops(); ++u) b.workspace = std::max(b.workspace, step.temp_bytes(u));
  absl::StatusOr<int64_t> peak = PeakOnOneDevice(step, *topology);
  if (!peak.ok()) return peak.status();
  b.peak = *peak;
  if (!o.load.training) b.activations = std::max<int64_t>(0, b.peak - b.parameters);
  return o.output == "json" ? Json(o, b) : Table(o, b);
}

}  // namespace placement::cli

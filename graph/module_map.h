// Answers in the model's own terms: which device runs each module of a model exported from PyTorch.
//
// torch's exporter names every node after the module scope it was traced in ("/layer1/layer1.0/conv1/Conv",
// "/layer1/layer1.0/relu_1/Relu" for the second call of layer1.0.relu, "/Flatten" directly in the model). A
// placement of the operators becomes a map from module path to device, at the coarsest level where a module's
// operators share one device and, where they do not, its children's: what a user needs to split the nn.Module.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "graph/topology.h"

namespace placement {

// The module scope of an exported node's name: "/layer1/layer1.0/relu_2/Relu" -> "layer1.0.relu_2" (the exporter
// names a container's child "<container>.<index>" and every other module by its attribute, with "_k" for the
// (k+1)-th call of a module used again), "/Flatten" -> "" (the model itself). nullopt for a name without a scope
// (the exporter's "Identity_3" for a shared weight, or any graph not exported from PyTorch).
std::optional<std::string> ModuleScopeOf(absl::string_view op_name);

struct ModuleDevice {
  std::string module;  // "" is the model itself
  std::string device;
};

// Module path -> device name, in the order the model runs its modules (a parent before its children). A module
// whose forward operators all run on one device is listed alone (not its children); a module whose operators
// are split lists its children and, for the operators in its own scope (an Add between two children), the
// device that runs most of their FLOPs. Backward and optimizer
// operators follow their forward operators and are not counted. Empty when no operator has a module scope.
std::vector<ModuleDevice> ModuleDeviceMap(const Graph& graph, const Placement& placement, const Topology& topology);

// The same map over any grouping of the operators (a device, a pipeline stage; kNone: not counted).
struct ModuleGroup {
  std::string module;
  int32_t group;
  OpId first_op;  // where the entry starts: its subtree's first operator, or its own first for a split module
};
std::vector<ModuleGroup> ModuleGroupMap(const Graph& graph, absl::Span<const int32_t> group_of_op);

// A parallel plan's stages in the model's own terms: the modules each stage runs, in the order the model runs
// them (its first and last are the stage's boundaries). A module split across stages lists its children in
// theirs (and itself in the stage that runs most of its own operators' FLOPs); empty when the graph has no
// module scopes.
std::vector<std::vector<std::string>> StageModules(const Graph& graph, absl::Span<const int32_t> stage_of_op,
                                                   int32_t num_stages);

}  // namespace placement

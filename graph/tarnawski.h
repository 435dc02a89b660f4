// Importer for the profiled-graph format published with "Efficient Algorithms for Device Placement of DNN
// Graph Operators" (Tarnawski et al., NeurIPS 2020), and for its expert splits.
//
// A node becomes an operator named by its decimal id, measured on kind "fpga" (when supportedOnFpga) and kind
// "cpu"; `size` becomes resident bytes, `colorClass` a colocation group, `isBackwardNode` the backward flag.
// Every node has one output tensor whose measured transfer time is the node's edge cost. The input's devices
// become a topology: maxFPGAs accelerators "acc0".. with maxSizePerFPGA bytes each, and maxCPUs CPU cores
// "cpu0".. with unlimited memory, every device with its own outgoing link. Times stay in the input's unit.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/placement.h"
#include "graph/problem.h"

namespace placement {

inline constexpr char kTarnawskiAcceleratorKind[] = "fpga";
inline constexpr char kTarnawskiCpuKind[] = "cpu";

absl::StatusOr<Problem> ParseTarnawskiGraph(absl::string_view json_text);

// True when the text looks like a Tarnawski graph (has "nodes", "edges" and "maxFPGAs" at the top level), so
// loaders can pick the importer without being told.
bool LooksLikeTarnawskiGraph(absl::string_view json_text);

// An expert split: {"fpgas": [{"nodes": [ids]}], "cpus": [{"nodes": [ids]}]}. fpgas[i] is device "acc<i>",
// cpus[j] is "cpu<j>". Nodes the split does not list take the device of their colour class (training graphs
// reuse the inference split for their forward nodes); a node with neither is an error naming it.
absl::StatusOr<Placement> ParseTarnawskiSplit(absl::string_view json_text, const Graph& graph,
                                              const Topology& topology);

bool LooksLikeTarnawskiSplit(absl::string_view json_text);

}  // namespace placement

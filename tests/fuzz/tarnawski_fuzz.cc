// Fuzz target: the Tarnawski et al. graph format, and a split (placement) read against the first graph of the
// input when the input holds a graph and a split separated by a NUL byte.
#include <cstddef>
#include <cstdint>

#include "graph/tarnawski.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const absl::string_view graph_text = input.substr(0, nul);
  placement::LooksLikeTarnawskiGraph(graph_text);
  absl::StatusOr<placement::Problem> problem = placement::ParseTarnawskiGraph(graph_text);
  if (problem.ok() && problem->topology.has_value() && nul != absl::string_view::npos) {
    const absl::string_view split = input.substr(nul + 1);
    placement::LooksLikeTarnawskiSplit(split);
    (void)placement::ParseTarnawskiSplit(split, problem->graph, *problem->topology);
  }
  return 0;
}

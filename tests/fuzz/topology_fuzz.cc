// Fuzz target: the topology parsers, JSON (input starting with '{') or shorthand, and writing back what parses.
#include <cstddef>
#include <cstdint>

#include "graph/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<placement::Topology> topology =
      !text.empty() && text[0] == '{' ? placement::ParseTopologyJson(text) : placement::ParseTopologyShorthand(text);
  if (topology.ok()) (void)placement::TopologyToJson(*topology);
  return 0;
}

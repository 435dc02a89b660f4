// Fuzz target: our placement.graph/v1 JSON format, and writing back what parses.
#include <cstddef>
#include <cstdint>

#include "graph/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  placement::LooksLikeGraphJson(text);
  absl::StatusOr<placement::Problem> problem = placement::ParseGraphJson(text);
  if (problem.ok()) (void)placement::ProblemToJson(*problem);
  return 0;
}

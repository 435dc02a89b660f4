// Seeded synthetic graphs for tests and benchmarks.
//
// Every generator draws from std::mt19937_64 (whose output the C++ standard fixes) through the explicit
// transforms in generators.cc rather than the standard distributions, whose algorithms each library picks:
// the same options and seed give the same graph whichever standard library built them.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace placement {

// A layered DAG shaped like a deep network: operators are dealt into layers of about `layer_width`; every
// operator after the first layer reads from the layer just before it and, with probability
// `skip_probability` per input, from any earlier layer (residual and skip connections). Costs are roofline
// inputs (FLOPs, bytes touched) drawn log-uniformly over the ranges below, so operators differ by orders of
// magnitude as they do in real models.
struct LayeredDagOptions {
  int32_t num_ops = 1000;
  double average_fan_in = 1.5;  // mean inputs per operator outside the first layer (>= 1)
  int32_t layer_width = 0;      // 0: about sqrt(num_ops)
  double skip_probability = 0.2;
  uint64_t seed = 1;

  double min_flops = 1e6, max_flops = 1e11;
  double min_bytes_accessed = 1e4, max_bytes_accessed = 1e8;
  double min_output_bytes = 1e3, max_output_bytes = 1e7;
  double param_fraction = 0.3;  // share of operators holding parameters
  double min_param_bytes = 1e4, max_param_bytes = 1e8;
  double temp_fraction = 0.2;  // share of operators needing scratch memory
  double min_temp_bytes = 1e3, max_temp_bytes = 1e6;
  double two_output_fraction = 0.1;   // share of operators with a second output (some go unread)
  int32_t num_colocation_groups = 0;  // operators are dealt into these groups with colocation_probability
  double colocation_probability = 0.1;
};

// Fails on options that cannot describe a graph (no operators, fan-in below 1, inverted ranges...), naming
// the option.
absl::StatusOr<Graph> LayeredRandomDag(const LayeredDagOptions& options);

}  // namespace placement

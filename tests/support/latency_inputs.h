// The latency inputs of Tarnawski et al. that tests and benchmarks run: the four shared ones with their greedy
// baseline's published figure (../shared/bench/tarnawski/latency-reference.tsv), and inputs derived the way
// their study derived its latency inputs from the throughput ones (read from ../shared, rewritten in memory,
// never copied into the project).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace placement::test_support {

struct LatencyInput {
  std::string name;              // e.g. "LayerGraphs/gnmt_inference", "LayerGraphs/gnmt_inference k=3"
  std::string json;              // the graph in their format
  std::string origin;            // the shared file it comes from, below TarnawskiDir(), and how it was changed
  int k = 0;                     // accelerators
  double published_greedy = -1;  // latency-reference.tsv; -1 for derived inputs
};

// The four shared inputs (in latency-reference.tsv order), then the derived ones:
//  - LayerGraphs/inceptionv3_inference and LayerGraphs/resnet50_inference from throughput-inputs, as their
//    study's latency versions: edge costs x 1000, 2 GiB per accelerator, 12 and 14 accelerators, 8 CPU cores;
//  - LayerGraphs/gnmt_inference with 3 accelerators and OperatorGraphs/bert_l-3_inference with 2 (from the
//    latency inputs): too little accelerator memory for the whole graph, so part of it runs on the CPU.
// Inputs whose files are missing are left out; empty when ../shared is absent.
std::vector<LatencyInput> TarnawskiLatencyInputs();

}  // namespace placement::test_support

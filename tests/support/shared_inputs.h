// The published inputs that tests and benchmarks read from ../shared (never copied into the project): where
// they are, and the reference figures of ../shared/bench/tarnawski/reference.tsv.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace placement::test_support {

// ../shared as configured (PLACEMENT_SHARED_DIR); it may be absent in a user's own clone.
std::filesystem::path SharedDir();
// ../shared/bench/tarnawski.
std::filesystem::path TarnawskiDir();

// The whole file, or "" when it cannot be read.
std::string ReadFileToString(const std::filesystem::path& path);

// One row of reference.tsv. Figures left blank in the file are -1.
struct TarnawskiReference {
  std::string input;  // path below TarnawskiDir(), e.g. throughput-inputs/LayerGraphs/gnmt_training.json
  int k = 0;          // accelerators
  double dp_optimal = -1;
  double dp_seconds = -1;
  double dp_peak_mb = -1;
  double expert = -1;
  double scotch = -1;
  double one_device = -1;
};

// Rows of DIR/reference.tsv in file order; empty when the file is absent.
std::vector<TarnawskiReference> ReadTarnawskiReference(const std::filesystem::path& dir = TarnawskiDir());

// ../shared/bench/pipedream.
std::filesystem::path PipeDreamDir();

// One row of its reference.tsv: what PipeDream's planner answers for a profile on a cluster.
struct PipeDreamReference {
  std::string model;     // profiles/<model>.txt
  std::string topology;  // topologies/<topology>.json
  std::string mode;      // "hybrid" or "straight"
  double time_per_stage = 0;
  std::string replicas;  // per stage, comma-separated
};

std::vector<PipeDreamReference> ReadPipeDreamReference(const std::filesystem::path& dir = PipeDreamDir());

}  // namespace placement::test_support

// What the Scotch and METIS placers share: the unit graph they partition and the step that turns a k-way
// partition (part i = device i) into a placement that respects pins, device kinds and memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/heuristics/placement_state.h"

namespace placement::heuristics {

// The graph with every unit contracted to one vertex: undirected, symmetric CSR, no self loops, parallel edges
// merged with their weights summed. Vertex weight: the unit's fastest time. Edge weight: mean transfer time.
struct UnitGraph {
  std::vector<int32_t> xadj;  // units + 1
  std::vector<int32_t> adjncy;
  std::vector<double> edge_weight;
  std::vector<double> vertex_weight;
};
UnitGraph ContractUnits(const CostModel& costs, const UnitIndex& units);

// Integer weights for the libraries: proportional to `values`, each at least 1, summing to about `total`
// (which keeps sums inside 32-bit integers).
std::vector<int32_t> ScaleToIntegers(absl::Span<const double> values, double total = 1e8);

struct RepairStats {
  int32_t evicted = 0;  // units moved off a device their part overfilled
  int64_t evicted_bytes = 0;
  int32_t unsupported = 0;  // units whose part's device cannot run them
  int32_t overflowed = 0;   // units that still did not fit their part when placed
};

// Places every unit through `ledger`, on part[u] where it may run and fits. Before placing, devices whose parts
// exceed their memory (units counted at their worst) shed the units that do the least work per byte until they
// fit; those, and units their part's device cannot run, go to the device where the planned busy time stays
// lowest among those with room. Fails with the ledger's Shortfall when a unit fits nowhere.
absl::StatusOr<RepairStats> AssignParts(const PlacementProblem& problem, const UnitIndex& units, MemoryLedger& ledger,
                                        absl::Span<const int32_t> part, const Budget& budget);

// "memory repair moved 3 units (1.2 GiB) ..." lines for the result's notes.
std::vector<std::string> RepairNotes(const RepairStats& stats);

}  // namespace placement::heuristics

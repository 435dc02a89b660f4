// The min-max dynamic program over chains of ideals, restricted to what a bound on the answer allows.
//
// A contiguous split is a chain ∅ = I_0 ⊆ I_1 ⊆ ... ⊆ I_{k+C} = V of ideals, step t going to one device
// (k accelerators and C CPUs, in any order along the chain; empty steps leave a device idle). The DP of the
// publication computes best[a][c][J] = min over I ⊆ J of max(best[a-1][c][I], acc-load(J \ I)) (or the CPU
// form), over all pairs of ideals: 670 million pairs on InceptionV3.
//
// With a bound T on the answer, every accelerator step holds at most T of accelerator work and every CPU
// step at most A(T), the most accelerator work a CPU can take within load T (a fractional knapsack, so an
// over-estimate). An ideal that ends step a + c of a chain within T therefore has work(J) ≤ aT + cA(T) and
// work(V \ J) ≤ (k − a)T + (C − c)A(T): each DP layer lives in a window of the work-sorted ideals, and a step
// pairs only ideals less than T of work apart. Transfers tighten this: a hyperedge crossing J is paid by the
// steps holding its members on either side of J (none holds all of it), so when no CPU step lies before J,
// work(J) + crossW(J) ≤ aT, and likewise after J. A step I -> J costs at least its work plus |crossW(J) − crossW(I)|,
// checked before the exact cost. Near the optimum kT + CA(T) is close to the total work, so windows are thin. Every
// chain whose steps all cost at most T satisfies all of this, so the DP returns the exact optimum whenever that optimum
// is at most T, and reports "not found" otherwise.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "policy/exact/ideal_set.h"
#include "policy/exact/pipeline_model.h"
#include "policy/placer.h"

namespace placement {

enum class SegmentCost : uint8_t {
  kLoad,    // THROUGHPUT load: accelerator compute + transfers, or CPU compute
  kMemory,  // bytes over the device's capacity (0 for unlimited devices): feasible splits score at most 1
};

// Bytes of one DP cell (value, back pointer, kind, and its entry in the list of reached ideals).
inline constexpr int64_t kChainDpCellBytes = 17;

struct ChainDpOptions {
  double bound = std::numeric_limits<double>::infinity();  // T above; steps costing more are not taken
  SegmentCost cost = SegmentCost::kLoad;
  bool enforce_memory = true;  // kLoad: a step must fit its device's capacity
  int64_t max_cells = 0;       // refuse to run when the windows hold more DP cells (0: no limit)
};

struct ChainSegment {
  int64_t from = 0;  // ideal I
  int64_t to = 0;    // ideal J ⊋ I
  bool cpu = false;
  double cost = 0;
};

struct ChainDpResult {
  bool found = false;
  bool expired = false;    // the budget ran out; nothing else is meaningful
  bool too_large = false;  // the windows held more than max_cells cells; nothing else is meaningful
  double value = std::numeric_limits<double>::infinity();
  std::vector<ChainSegment> segments;  // the non-empty steps in chain order
  bool memory_pruned = false;          // some step was refused only because it did not fit memory
  int64_t window_ideals = 0;           // DP cells over all layers
  int64_t pairs = 0;                   // (I, J) pairs whose cost was evaluated
};

ChainDpResult RunChainDp(const PipelineModel& model, const IdealSet& ideals, const ChainDpOptions& options,
                         const Budget& budget);

// A(T): an upper bound on the accelerator work one CPU device can hold with CPU load at most T.
double CpuAbsorption(const PipelineModel& model, double bound);

// THROUGHPUT load of the step I -> J on an accelerator (compute + transfers) or a CPU (compute).
double StepLoad(const PipelineModel& model, const IdealSet& ideals, int64_t from, int64_t to, bool cpu);

}  // namespace placement

// Single-sample latency as Tarnawski et al. define it ("Efficient Algorithms for Device Placement of DNN Graph
// Operators", NeurIPS 2020, the latency model of their integer program and of the scorer published with it),
// for any placement.
//
// An operator on a CPU runs on its own as soon as its inputs are done and finishes at max(finish of its
// predecessors) + its time. CPU cores are no limit: their IP assumes as many as the graph is wide and their
// scorer never counts them, so the number of CPU devices (maxCPUs) and which of them an operator uses change
// nothing. An accelerator's operators split into contiguous pieces, numbered as their scorer numbers them: an
// operator's piece is 1 + the most times a path into it leaves the accelerator's set and comes back (a set
// that is already contiguous is one piece). A piece runs as one block once every input is ready; all its
// operators finish together at
//     max(finish of the outside operators feeding it) + sum of cost(t) over the tensors entering it
//       + sum of its operators' times + sum of cost(t) over its tensors read outside it.
// A piece can only start after the one before it on its accelerator: it reads something that piece produced.
// The latency is the largest finish. The graph contracted by the pieces (CPU operators stay single) must be
// acyclic: a split where it is not is one their model forbids.
//
// cost(t) is the time to move tensor t between the accelerator and host memory: its measured transfer time
// (their inputs give one per node), else the path to a CPU of the accelerator's host (any CPU when its host
// has none, another device when the topology has no CPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/cost_model.h"

namespace placement {

// One accelerator block of a split.
struct LatencyBlock {
  DeviceId device = -1;
  int32_t piece = 1;  // 1, 2, ... on its accelerator, in the order they run
  int32_t num_ops = 0;
  double ready = 0;  // when the last outside operator feeding it finishes
  double finish = 0;
  double compute = 0;   // the sum of its operators' times
  double transfer = 0;  // cost(t) of the tensors entering and leaving it
};

// Scores splits of one graph on one cluster. Keeps scratch space between calls (a search scores thousands of
// splits), so one instance serves one thread.
class TarnawskiLatency {
 public:
  explicit TarnawskiLatency(const CostModel& costs);

  // The latency of a valid placement (ValidatePlacement), or INVALID_ARGUMENT naming the accelerators whose
  // blocks feed each other when the contracted graph has a cycle. `blocks` receives the accelerator blocks in
  // the order they run.
  absl::StatusOr<double> Score(absl::Span<const DeviceId> device, std::vector<LatencyBlock>* blocks = nullptr);
  // The same without a message: infinity where the model forbids the split.
  double Latency(absl::Span<const DeviceId> device);

  // After Score or Latency of an allowed split: the sum of every block's finish (CPU operators count as blocks),
  // which tells apart splits of equal latency that finish more or less of the work early.
  double finish_sum() const { return finish_sum_; }
  // After Score or Latency of an allowed split: when operator v finishes (with its whole block).
  double op_finish(OpId v) const { return finish_[block_of_[v]]; }
  // After Score or Latency: how many pieces accelerator d's operators form (0 when it has none).
  int32_t pieces(DeviceId d) const { return pieces_[d]; }
  bool is_accelerator(DeviceId d) const { return accelerator_[d] != 0; }
  double BoundaryCost(TensorId t, DeviceId accelerator) const {
    return cost_[static_cast<size_t>(t) * cost_stride_ + (cost_stride_ == 1 ? 0 : accelerator)];
  }
  const CostModel& costs() const { return costs_; }

 private:
  // Pieces, blocks and their order; false when the contracted graph has a cycle.
  bool Contract(absl::Span<const DeviceId> device);
  void NumberPieces(absl::Span<const DeviceId> device);
  double Finish(absl::Span<const DeviceId> device, std::vector<LatencyBlock>* blocks);
  LatencyBlock FinishBlock(absl::Span<const DeviceId> device, int32_t b);
  std::vector<EdgeId> CycleEdges() const;
  std::string DescribeCycle(absl::Span<const DeviceId> device) const;

  const CostModel& costs_;
  std::vector<uint8_t> accelerator_;  // per device
  int32_t cost_stride_ = 1;           // 1 when every tensor's cost is measured, else the number of devices
  std::vector<double> cost_;          // per tensor (x device)

  // Scratch, per operator / per block.
  std::vector<int32_t> pieces_, piece_base_, dp_, block_of_, member_begin_, members_, indegree_, order_;
  std::vector<DeviceId> block_device_;
  std::vector<double> finish_;   // per block
  std::vector<uint64_t> stamp_;  // per tensor: (call, block) that last counted it
  uint64_t epoch_ = 0;           // calls so far
  double finish_sum_ = 0;
};

}  // namespace placement

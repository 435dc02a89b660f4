// The min-max dynamic program over chains of ideals with a replica count per stage: the exact core of the hybrid
// planner, for any stage cost the caller gives.
//
// A plan is a chain start = I_0 ⊊ I_1 ⊊ ... ⊊ I_k = end of ideals of the unit DAG (policy/exact/ideal_set.h);
// stage t holds I_t \ I_{t-1} on r_t devices, the devices taken in order, so stage t starts at device offset
// r_1 + ... + r_{t-1} (plus devices left idle before it). best[m][J] is the least largest stage cost over chains
// from start to J on the first m devices:
//
//   best[m][J] = min( best[m-1][J]  (device m-1 idle),  min over I ⊊ J, r <= m of max(best[m-r][I], cost(I, J, m-r, r))
//   ).
//
// With a bound T on the answer and costs no smaller than a stage's work over its replicas, a stage holds at most
// rT of work, so the ideals that end the first m devices of a chain within T have work(J) - work(start) <= mT and
// work(end) - work(J) <= (D - m)T: every layer lives in a window of the work-sorted ideals, and a step pairs only
// ideals less than rT apart. Every chain whose stages all cost at most T passes, so a run at T finds the optimum
// whenever it is at most T (as chain_dp.h does for one device per stage).
//
// Backward runs compute, for every ideal I, the best chain from I to end (its first stage is the one from I),
// which the two-level planner needs for the last block of a pipeline; their costs see the stage's position only
// as `first` (offsets are not known).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "policy/exact/ideal_set.h"
#include "policy/placer.h"

namespace placement::parallel {

inline constexpr double kNoPlan = std::numeric_limits<double>::infinity();

// cost(from, to, offset, replicas, first): the stage from ideal `from` to ideal `to` on `replicas` devices
// starting at device `offset`; `first` when it is the chain's first stage. kNoPlan when it cannot run there
// (memory). Must be at least (work(to) - work(from)) / (replicas x work_per_bound).
using StageCostFn = absl::FunctionRef<double(int64_t from, int64_t to, int32_t offset, int32_t replicas, bool first)>;

struct ReplicaDpOptions {
  int64_t start = 0;  // ideal
  int64_t end = 0;    // ideal, start ⊆ end
  int32_t devices = 1;
  int32_t max_replicas = 1 << 30;
  double bound = kNoPlan;
  bool backward = false;
  // The chains end the plan (true), so the devices left hold the rest of the way to end (or from start): the
  // windows prune by it. False when other devices run the rest (a block of a pipeline between hosts).
  bool whole_chain = true;
  // Work one device holds per unit of the bound: costs are at least work / (replicas x work_per_bound) (a stage
  // replicated again on several hosts divides it further).
  double work_per_bound = 1;
};

struct ReplicaStep {
  int64_t from = 0, to = 0;
  int32_t offset = 0, replicas = 0;
};

class ReplicaDp {
 public:
  ReplicaDp(const IdealSet& ideals, const ReplicaDpOptions& options, StageCostFn cost, const Budget& budget);

  // False when the budget ran out (nothing else is meaningful then).
  bool Run();

  // Forward runs: the best chain from start to `ideal` on all the devices (kNoPlan when none within the bound),
  // and its stages. Backward runs: the best chain from `ideal` to end.
  double Best(int64_t ideal) const;
  std::vector<ReplicaStep> Chain(int64_t ideal) const;
  int64_t pairs() const { return pairs_; }
  int64_t cells() const { return cells_; }

 private:
  // The best way to a cell: the other end of its stage next to the chain's fixed end (the cell's own ideal when
  // the layer's device idles) and the stage's replicas (0: idle).
  struct Choice {
    double value = kNoPlan;
    int32_t other = -1;
    int32_t replicas = 0;
  };
  struct Layer {
    int64_t lo = 0, hi = 0;        // window of the work-sorted ideals
    std::vector<Choice> rest;      // the stage at the cell is not the chain's first
    std::vector<Choice> first;     // backward runs: the stage from the cell is the chain's first
    std::vector<int32_t> reached;  // ideals with a finite rest value, ascending
    bool Contains(int64_t i) const { return i >= lo && i < hi; }
  };

  void Window(int32_t m);
  bool Fill(int32_t m);
  void Relax(int32_t m, int64_t j, Choice& rest, Choice& first);
  bool Inside(int64_t i) const;  // start ⊆ i ⊆ end
  const Choice* At(int32_t m, int64_t i, bool first) const;

  const IdealSet& s_;
  const ReplicaDpOptions o_;
  StageCostFn cost_;
  const Budget& budget_;
  double bound_ = kNoPlan, slack_ = 0;
  std::vector<Layer> layers_;
  int64_t pairs_ = 0, cells_ = 0, since_check_ = 0;
};

}  // namespace placement::parallel

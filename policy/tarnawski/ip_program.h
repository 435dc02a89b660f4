// Internal to policy/tarnawski: the latency program of latency_ip.h as CBC's columns and rows, the start vector
// of a split and the split of a solution.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/ilp/milp.h"
#include "policy/ilp/symmetry.h"
#include "policy/tarnawski/instance.h"

namespace placement::tarnawski {

// A tensor some other unit reads: the units that would pay for it when it crosses a subgraph's border.
struct Crossing {
  TensorId tensor;
  OpId producer;
  int32_t unit;
  std::vector<int32_t> readers;  // distinct units other than the producer's
};

class LatencyProgram {
 public:
  // q subgraphs per accelerator; times scaled so that `horizon`, the largest latency the program considers,
  // is 100 (CBC's tolerances are absolute); T starts at `lower`.
  LatencyProgram(const Instance& in, const TarnawskiLatency& model, int32_t q, double horizon, double lower);

  const ilp::Milp& milp() const { return milp_; }
  double scale() const { return scale_; }
  // The columns for a split that fits and whose subgraphs are contiguous (each accelerator's in its first
  // subgraph), with `scored` holding its operators' finish times (TarnawskiLatency::Latency of the split).
  // Units the program keeps on the CPU (FreeOnCpu) must be there: MoveFreeUnitsToCpu.
  std::vector<double> StartVector(const std::vector<DeviceId>& split, const TarnawskiLatency& scored,
                                  double latency) const;
  std::vector<DeviceId> Split(const std::vector<double>& solution) const;
  // The same split with the units the program keeps on the CPU moved there (never slower, still allowed).
  std::vector<DeviceId> MoveFreeUnitsToCpu(std::vector<DeviceId> split) const;
  // The accelerator classes the symmetry rows order (a start split must be canonicalized over them).
  const std::vector<std::vector<DeviceId>>& classes() const { return classes_; }

 private:
  DeviceId SlotDevice(int32_t s) const { return in_.accelerators[s / q_]; }
  int32_t SlotOf(DeviceId accelerator) const;
  int X(int32_t u, int32_t s) const { return x_[static_cast<size_t>(u) * (slots_ + 1) + s]; }  // s == slots_: CPU
  int Z(OpId v, int32_t s) const { return z_[static_cast<size_t>(v) * slots_ + s]; }
  bool FreeOnCpu(int32_t u) const;
  void AddAssignment();
  void AddMemory();
  void AddContiguity();
  void AddCommunication();
  void AddTiming(double lower);
  void AddSlotTiming();
  void AddPathRows();
  ilp::Milp::Terms OpTime(OpId v, double sign) const;
  void AddSymmetry();
  void StartSlots(const std::vector<DeviceId>& split, std::vector<double>& v) const;
  void StartPaths(std::vector<double>& v) const;

  const Instance& in_;
  const TarnawskiLatency& model_;
  const int32_t q_, slots_;
  const double scale_, big_;
  const std::vector<Crossing> crossings_;
  ilp::Milp milp_;
  std::vector<int> x_, z_, lat_, start_, finish_, path_;
  std::vector<int> in_col_, out_col_;  // crossings x slots, -1 where absent
  std::vector<int32_t> crossing_of_;   // per tensor: its index in crossings_, -1 when no other unit reads it
  std::vector<std::vector<DeviceId>> classes_;
  std::vector<ilp::RunningSum> running_;
  int total_ = -1;
};

}  // namespace placement::tarnawski

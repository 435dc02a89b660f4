// Bytes resident on each device over simulated time, and the peak.
//
// Internal to the simulator library. Every buffer lives over a half-open interval [allocated, freed): what
// is freed at time t and what is allocated at t never coexist. The simulator therefore applies all changes
// at one timestamp and only then calls Settle(), which raises the peak of the devices that allocated and,
// when recording, appends a sample for every device whose bytes changed. Recording compares every device
// at each settle rather than marking frees, so that the plain simulation's Free stays a subtraction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/topology.h"
#include "simulator/simulator.h"

namespace placement {

class MemoryTracker {
 public:
  // `resident` is what each device holds for the whole step (its parameters).
  // With `record`, the tracker keeps every device's step function for TakeSamples().
  MemoryTracker(std::vector<int64_t> resident, bool record)
      : current_(std::move(resident)), peak_(current_), touched_(current_.size(), 0), record_(record) {
    touched_list_.reserve(current_.size());
    if (record_) {
      samples_.resize(current_.size());
      for (size_t d = 0; d < current_.size(); ++d) samples_[d].push_back(MemorySample{0, current_[d]});
    }
  }

  void Allocate(DeviceId d, int64_t bytes) {
    current_[d] += bytes;
    if (!touched_[d]) {
      touched_[d] = 1;
      touched_list_.push_back(d);
    }
  }
  void Free(DeviceId d, int64_t bytes) { current_[d] -= bytes; }

  // Call once every change at timestamp `now` is in.
  void Settle(double now) {
    for (DeviceId d : touched_list_) {
      peak_[d] = std::max(peak_[d], current_[d]);
      touched_[d] = 0;
    }
    touched_list_.clear();
    if (record_) {
      for (DeviceId d = 0; d < static_cast<DeviceId>(current_.size()); ++d) Record(d, now);
    }
  }

  int64_t peak(DeviceId d) const { return peak_[d]; }
  std::vector<std::vector<MemorySample>> TakeSamples() { return std::move(samples_); }

 private:
  // Changes that cancel out add no sample, and a time settled twice (time 0: before the loop and again for
  // what ends at 0) keeps one sample with the final bytes, so times strictly increase.
  void Record(DeviceId d, double now) {
    std::vector<MemorySample>& s = samples_[d];
    if (s.back().bytes == current_[d]) return;
    if (s.back().time == now) {
      s.back().bytes = current_[d];
      if (s.size() > 1 && s[s.size() - 2].bytes == current_[d]) s.pop_back();
      return;
    }
    s.push_back(MemorySample{now, current_[d]});
  }

  std::vector<int64_t> current_;
  std::vector<int64_t> peak_;
  std::vector<uint8_t> touched_;
  std::vector<DeviceId> touched_list_;
  bool record_ = false;
  std::vector<std::vector<MemorySample>> samples_;  // per device, when record_
};

}  // namespace placement

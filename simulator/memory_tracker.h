// Bytes resident on each device over simulated time, and the peak.
//
// Internal to the simulator library. Every buffer lives over a half-open interval [allocated, freed): what
// is freed at time t and what is allocated at t never coexist. The simulator therefore applies all changes
// at one timestamp and only then calls Settle(), which raises the peak of the devices that allocated.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "graph/topology.h"

namespace placement {

class MemoryTracker {
 public:
  // `resident` is what each device holds for the whole step (its parameters).
  explicit MemoryTracker(std::vector<int64_t> resident)
      : current_(std::move(resident)), peak_(current_), touched_(current_.size(), 0) {
    touched_list_.reserve(current_.size());
  }

  void Allocate(DeviceId d, int64_t bytes) {
    current_[d] += bytes;
    if (!touched_[d]) {
      touched_[d] = 1;
      touched_list_.push_back(d);
    }
  }
  void Free(DeviceId d, int64_t bytes) { current_[d] -= bytes; }

  // Call once every change at the current timestamp is in.
  void Settle() {
    for (DeviceId d : touched_list_) {
      peak_[d] = std::max(peak_[d], current_[d]);
      touched_[d] = 0;
    }
    touched_list_.clear();
  }

  int64_t peak(DeviceId d) const { return peak_[d]; }

 private:
  std::vector<int64_t> current_;
  std::vector<int64_t> peak_;
  std::vector<uint8_t> touched_;
  std::vector<DeviceId> touched_list_;
};

}  // namespace placement

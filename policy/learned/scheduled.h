// Scheduled decoding: the network and HEFT's schedule decide together. HEFT's list scheduler (upward-rank
// order, gap insertion) visits the units one by one; where it would take the device on which the unit's first
// operator finishes earliest, this decoding scores every device it may use as
//     logit(group, device) - weight * (finish on device - earliest finish) / time_scale
// and takes the best (greedy) or samples the softmax. With flat logits it is HEFT; a network that has learned
// where HEFT's earliest-finish rule goes wrong (an operator worth offloading to a device that finishes it later
// but frees the critical path) moves those units. Unlike the guided decoding's hard candidate sets, every device
// stays reachable and the schedule so far is seen at each choice; the network still runs once.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/heuristics/heft.h"
#include "policy/learned/coarsen.h"
#include "policy/learned/learned_policy.h"

namespace placement::learned {

// What a decoding chose, for the trainer's log-probabilities: one row per choice among two or more devices.
struct ScheduledTrace {
  std::vector<int64_t> group;   // per choice: its group
  std::vector<float> penalty;   // choices x devices: weight * delay / time_scale; kNotOffered where not offered
  std::vector<int64_t> choice;  // per choice: the device taken
  static constexpr float kNotOffered = 1e4f;
};

// The time a delay is measured in: the mean over groups of their time on their fastest device.
double ScheduleTimeScale(const Coarsening& groups, int32_t devices);

// A chooser for heuristics::HeftWithCandidates::PlaceChosen. rng null: greedy (ties to the earliest finish);
// trace may be null. `scores`, `groups`, `rng` and `trace` must outlive its use.
heuristics::DeviceChooser ScheduledChooser(const PolicyScores& scores, const Coarsening& groups, double weight,
                                           double time_scale, std::mt19937_64* rng, ScheduledTrace* trace);

}  // namespace placement::learned

// Three ways to turn the network's scores into a device per group:
//   single shot (GDP): every group at once, from the logits alone, greedy or sampled;
//   iterative (Placeto): groups one by one in topological order over a current placement, each seeing where
//   its neighbours are and how loaded each device is now (the context features), for a few sweeps;
//   guided: the network narrows each group to the devices it rates close to its best, and a list scheduler
//   (HEFT's earliest finish, policy/heuristics/heft.h) chooses among them in time order. The network decides
//   where a group may go; the schedule decides the balance between devices the network rates alike, which
//   one-shot logits cannot see (every group chooses at once, so none knows how loaded a device already is).
// A fourth, the scheduled decoding (scores and schedule weighed at every choice), is in scheduled.h.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "policy/learned/coarsen.h"
#include "policy/learned/features.h"
#include "policy/learned/learned_policy.h"

namespace placement::learned {

// rng null: greedy (the highest logit, ties to the lower device id); else a sample from the softmax.
std::vector<int32_t> DecodeSingleShot(const PolicyScores& scores, std::mt19937_64* rng);

// One sweep over all groups in topological order; `group_device` is updated in place.
void DecodeSweep(const PolicyScores& scores, const PolicyInput& input, std::vector<int32_t>& group_device,
                 std::mt19937_64* rng);

// log(threshold) for a guided decoding's threshold, clamped into [1e-30, 1]: a device stays a candidate where
// its logit is at least the group's best logit plus this.
double LogThreshold(double threshold);

// Groups x devices (row-major), 1 where the group rates the device at least `threshold` times its best softmax
// probability (threshold in (0, 1]; 1 keeps the best device and its ties).
std::vector<uint8_t> GroupCandidates(const PolicyScores& scores, double threshold);
// Group rows expanded to operators x devices: every operator carries its group's row.
std::vector<uint8_t> OperatorCandidates(const std::vector<uint8_t>& group_rows, const Coarsening& groups,
                                        int32_t devices);

// A sample of the guided decoding's candidates (groups x devices): each group keeps its best device and each
// other one with probability sigmoid(logit - best logit - log(threshold)), so the most likely sample is
// GroupCandidates at that threshold. Devices a group may not go to (masked logits) are never drawn.
std::vector<uint8_t> SampleGroupCandidates(const PolicyScores& scores, double threshold, std::mt19937_64& rng);

// Index of the chosen device in one row of logits.
int32_t Choose(const float* logits, int32_t devices, std::mt19937_64* rng);
// The same over scores in double precision (the scheduled decoding's logits less delay penalties).
int32_t Choose(const double* scores, int32_t devices, std::mt19937_64* rng);

}  // namespace placement::learned

// Two ways to turn the network's scores into a device per group, greedy or sampled:
//   single shot (GDP): every group at once, from the logits alone;
//   iterative (Placeto): groups one by one in topological order over a current placement, each seeing where
//   its neighbours are and how loaded each device is now (the context features), for a few sweeps.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "policy/learned/features.h"
#include "policy/learned/learned_policy.h"

namespace placement::learned {

// rng null: greedy (the highest logit, ties to the lower device id); else a sample from the softmax.
std::vector<int32_t> DecodeSingleShot(const PolicyScores& scores, std::mt19937_64* rng);

// One sweep over all groups in topological order; `group_device` is updated in place.
void DecodeSweep(const PolicyScores& scores, const PolicyInput& input, std::vector<int32_t>& group_device,
                 std::mt19937_64* rng);

// Index of the chosen device in one row of logits.
int32_t Choose(const float* logits, int32_t devices, std::mt19937_64* rng);

}  // namespace placement::learned

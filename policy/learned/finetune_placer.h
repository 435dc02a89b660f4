// policy_finetune: the learned policy fine-tuned on the request's own graph within the request's budget, as GDP
// fine-tunes its pre-trained network on the target graph:
//   1. the single-shot placer ("policy") on the served weights: the answer to beat, and the time a decoding takes;
//   2. a private copy of the served weights trained by REINFORCE on this one graph (trainer.h: the scheduled
//      decoding the shipped network is trained for), rewarded by the problem's own objective and simulator, for
//      the budget less the time step 3 needs; the best placement any sample draws is kept;
//   3. the single-shot placer on the tuned copy.
// The answer is the best of these, so never worse than the single shot. The served weights are only read (the copy
// is made from them once): every request tunes a copy of its own and drops it when it answers.
#pragma once

#include <memory>

#include "policy/learned/learned_placers.h"
#include "policy/learned/learned_policy.h"
#include "policy/placer.h"

namespace placement::learned {

std::unique_ptr<Placer> MakeFinetunePlacer(std::shared_ptr<const LearnedPolicy> policy,
                                           const LearnedPlacerOptions& options);

}  // namespace placement::learned

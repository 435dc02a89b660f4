#include "policy/learned/learned_placer_info.h"

namespace placement::learned {

const std::vector<LearnedPlacerInfo>& LearnedPlacerInfos() {
  static const std::vector<LearnedPlacerInfo>* infos = new std::vector<LearnedPlacerInfo>{
      {"policy",
       "learned GNN policy, single shot (GDP): one pass scores every operator group; greedy, sampled, guided (HEFT "
       "among the devices it rates near its best) and scheduled (HEFT's list scheduler weighing its scores against "
       "delays) decodings, the best simulated",
       {Objective::kStepTime, Objective::kLatency}},
      {"policy_iterative",
       "learned GNN policy, iterative (Placeto): group by group over the current placement, best sweep kept",
       {Objective::kStepTime, Objective::kLatency}},
      {"policy_search",
       "learned GNN policy's single-shot answer improved by local search",
       {Objective::kStepTime, Objective::kLatency}},
      {"policy_finetune",
       "learned GNN policy fine-tuned on this graph for the budget (reinforcement on a private copy of the served "
       "weights); never worse than the single shot",
       {Objective::kStepTime, Objective::kLatency}},
  };
  return *infos;
}

const LearnedPlacerInfo& InfoOf(LearnedPlacerKind kind) { return LearnedPlacerInfos()[static_cast<int>(kind)]; }

bool RunsLearnedPolicy(absl::string_view algorithm) {
  if (algorithm.empty() || algorithm == "auto") return true;
  for (const LearnedPlacerInfo& info : LearnedPlacerInfos()) {
    if (algorithm == info.name) return true;
  }
  return false;
}

}  // namespace placement::learned

// Which placers AUTO runs for a problem, and how it splits the budget between them.
//
// The plan depends on the objective and the graph's operator count, never on the clock, so the same problem
// always gets the same plan:
//
//   THROUGHPUT   pipeline_dp (<= kMaxOpsPipelineDp operators), ilp_throughput (<= kMaxOpsIlpThroughput),
//                m_topo, scotch, metis, heft, single_device
//   STEP_TIME    policy and policy_iterative (learned, when the registry has them), heft, m_etf, m_sct
//   LATENCY      (<= kMaxOpsSct), critical_path, m_topo, single_device, ilp_latency (<= kMaxOpsIlpLatency),
//                scotch and metis (>= kMinOpsPartitioners: on small graphs the list schedulers do at least as well)
//   LATENCY under the tarnawski cost model: tarnawski_greedy, then from the best so far tarnawski_search,
//                ilp_tarnawski (<= kMaxOpsTarnawskiIp) and ilp_tarnawski_nc (<= kMaxOpsTarnawskiIpNc)
//
// and then local_search (tarnawski_search under the tarnawski cost model) from the best three distinct answers,
// best first (the learned policy's among them),
// while time remains (skipped once the best meets a proven lower bound). Placers the registry lacks, or that
// do not list the objective, are left out. The one-shot placers share (1 - search_fraction) of the budget by
// weight, each getting its weight's share of what is left when it starts, so time a fast placer does not use
// passes on; local search gets the rest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/placer.h"

namespace placement {

class PlacerRegistry;

namespace portfolio {

// Measured on layered DAGs on 8 devices (the step that decided each is in the comment).
inline constexpr int32_t kMaxOpsPipelineDp = 10000;  // 10k operators: 8.6 s; 30k: past a 10 s deadline
inline constexpr int32_t kMaxOpsIlpThroughput = 500;
inline constexpr int32_t kMaxOpsIlpLatency = 60;
inline constexpr int32_t kMaxOpsSct = 5000;  // its favourite-child LP: 10k operators 1.5 s, 30k past 10 s
inline constexpr int32_t kMinOpsPartitioners = 2000;
// Measured on the Tarnawski latency inputs within 30 s: the contiguous program closes on bert24 (32 operators)
// and still improves on the search's split past 100; past 200 (bert_l-3, resnet50) CBC's root LP alone takes
// the budget.
inline constexpr int32_t kMaxOpsTarnawskiIp = 200;
inline constexpr int32_t kMaxOpsTarnawskiIpNc = 60;
inline constexpr char kSearchPlacer[] = "local_search";
inline constexpr char kTarnawskiSearchPlacer[] = "tarnawski_search";

struct Candidate {
  std::string name;
  double weight = 1;       // share of the one-shot budget, relative to the others
  bool from_best = false;  // starts from the best answer so far (PlacementProblem::start)
};

struct Plan {
  std::vector<Candidate> run;        // in the order they run
  std::vector<std::string> skipped;  // "name: why", for the notes
  bool search = false;               // finish with the search placer
  std::string search_placer = kSearchPlacer;
};

Plan PlanPortfolio(const PlacementProblem& problem, const PlacerRegistry& registry);

}  // namespace portfolio
}  // namespace placement

#include "policy/auto/portfolio.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "policy/registry.h"

namespace placement::portfolio {
namespace {

// A candidate with the size range it is worth running on; 0 means no limit.
struct Entry {
  const char* name;
  double weight;
  int32_t min_ops;
  int32_t max_ops;
  bool from_best = false;
};

// Exact methods get a larger share: they use what they get, and what they do not use passes on.
constexpr Entry kThroughput[] = {
    {"pipeline_dp", 3, 0, kMaxOpsPipelineDp},
    {"ilp_throughput", 3, 0, kMaxOpsIlpThroughput},
    {"m_topo", 1, 0, 0},
    {"scotch", 1, 0, 0},
    {"metis", 1, 0, 0},
    {"heft", 1, 0, 0},
    {"single_device", 1, 0, 0},
};

// The learned policy (when the registry has it) runs first: it takes milliseconds, and local search starts
// from its answer too.
constexpr Entry kSimulated[] = {
    {"policy", 1, 0, 0},
    {"policy_iterative", 1, 0, 0},
    {"heft", 1, 0, 0},
    {"m_etf", 1, 0, 0},
    {"m_sct", 1, 0, kMaxOpsSct},
    {"critical_path", 1, 0, 0},
    {"m_topo", 1, 0, 0},
    {"single_device", 1, 0, 0},
    {"ilp_latency", 3, 0, kMaxOpsIlpLatency},
    {"scotch", 1, kMinOpsPartitioners, 0},
    {"metis", 1, kMinOpsPartitioners, 0},
};

// Tarnawski et al.'s latency: their greedy, then the search and the programs from the best so far (each
// program also warm-starts itself with a search for a quarter of its share).
constexpr Entry kTarnawski[] = {
    {"tarnawski_greedy", 1, 0, 0},
    {"tarnawski_search", 2, 0, 0, true},
    {"ilp_tarnawski", 4, 0, kMaxOpsTarnawskiIp, true},
    {"ilp_tarnawski_nc", 2, 0, kMaxOpsTarnawskiIpNc, true},
};

// The entries for the problem's objective and cost model.
absl::Span<const Entry> Entries(const PlacementProblem& problem) {
  if (problem.cost_model == CostModelKind::kTarnawski) return kTarnawski;
  if (problem.objective == Objective::kThroughput) return kThroughput;
  return kSimulated;
}

}  // namespace

Plan PlanPortfolio(const PlacementProblem& problem, const PlacerRegistry& registry) {
  Plan plan;
  const int32_t ops = problem.graph().num_ops();
  auto consider = [&](const Entry& e) {
    absl::StatusOr<const Placer*> p = registry.Find(e.name);
    if (!p.ok()) return;  // not in this build
    if (!Optimizes(**p, problem)) return;
    if (e.max_ops > 0 && ops > e.max_ops) {
      plan.skipped.push_back(absl::StrCat(e.name, ": skipped, ", ops, " operators > ", e.max_ops));
      return;
    }
    if (e.min_ops > 0 && ops < e.min_ops) {
      plan.skipped.push_back(absl::StrCat(e.name, ": skipped, ", ops, " operators < ", e.min_ops));
      return;
    }
    plan.run.push_back(Candidate{e.name, e.weight, e.from_best});
  };
  for (const Entry& e : Entries(problem)) consider(e);
  if (problem.cost_model == CostModelKind::kTarnawski) plan.search_placer = kTarnawskiSearchPlacer;
  absl::StatusOr<const Placer*> search = registry.Find(plan.search_placer);
  plan.search = search.ok() && Optimizes(**search, problem);
  return plan;
}

}  // namespace placement::portfolio

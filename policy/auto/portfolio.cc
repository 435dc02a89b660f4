#include "policy/auto/portfolio.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "policy/registry.h"

namespace placement::portfolio {
namespace {

// A candidate with the size range it is worth running on; 0 means no limit.
struct Entry {
  const char* name;
  double weight;
  int32_t min_ops;
  int32_t max_ops;
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

bool Lists(const Placer& p, Objective objective) {
  const std::vector<Objective> o = p.objectives();
  return std::find(o.begin(), o.end(), objective) != o.end();
}

}  // namespace

Plan PlanPortfolio(const PlacementProblem& problem, const PlacerRegistry& registry) {
  Plan plan;
  const int32_t ops = problem.graph().num_ops();
  auto consider = [&](const Entry& e) {
    absl::StatusOr<const Placer*> p = registry.Find(e.name);
    if (!p.ok()) return;  // not in this build
    if (!Lists(**p, problem.objective)) return;
    if (e.max_ops > 0 && ops > e.max_ops) {
      plan.skipped.push_back(absl::StrCat(e.name, ": skipped, ", ops, " operators > ", e.max_ops));
      return;
    }
    if (e.min_ops > 0 && ops < e.min_ops) {
      plan.skipped.push_back(absl::StrCat(e.name, ": skipped, ", ops, " operators < ", e.min_ops));
      return;
    }
    plan.run.push_back(Candidate{e.name, e.weight});
  };
  if (problem.objective == Objective::kThroughput) {
    for (const Entry& e : kThroughput) consider(e);
  } else {
    for (const Entry& e : kSimulated) consider(e);
  }
  absl::StatusOr<const Placer*> search = registry.Find(kSearchPlacer);
  plan.search = search.ok() && Lists(**search, problem.objective);
  return plan;
}

}  // namespace placement::portfolio

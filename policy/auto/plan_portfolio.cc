#include "policy/auto/plan_portfolio.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/parallel/hybrid_placer.h"
#include "policy/parallel/plan_search.h"

namespace placement::portfolio {
namespace {

struct Candidate {
  std::string name;
  absl::StatusOr<PlacerResult> result;
  absl::Duration took;
};

bool Fits(const Candidate& c) { return c.result.ok() && c.result->evaluation.fits_memory; }

// One line per candidate: its time (a step's, with a global batch; a micro-batch's otherwise), the simulated one,
// and why it lost to the winner, whose confirmed time is `best` (0: none).
std::string Describe(const Candidate& c, int64_t global_batch, double confirmed, double best) {
  const std::string ms = absl::StrFormat("%.0f ms", absl::ToDoubleMilliseconds(c.took));
  if (!c.result.ok()) {
    return absl::StrCat(c.name, ": ", absl::StatusCodeToString(c.result.status().code()), " after ", ms, " (",
                        c.result.status().message(), ")");
  }
  const double simulated = c.result->plan.has_value() ? c.result->plan->simulated_time_per_sample : 0;
  const double scale = global_batch > 0 ? static_cast<double>(global_batch) : 1.0;
  std::string verdict;
  if (!c.result->evaluation.fits_memory) {
    verdict = " (does not fit memory)";
  } else if (best > 0 && confirmed > best * (1 + 1e-9)) {
    verdict = absl::StrFormat(" (%.2fx the answer's time)", confirmed / best);
  }
  return absl::StrFormat("%s: %.6g %s%s in %s%s", c.name, c.result->evaluation.value * scale,
                         global_batch > 0 ? "per step" : "per micro-batch",
                         simulated > 0 ? absl::StrFormat(" (simulated %.6g)", simulated * scale) : "", ms, verdict);
}

Candidate Plan(const PlacementProblem& problem, const Budget& budget, Parallelism parallelism) {
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> r = PlanParallel(problem, budget, parallelism);
  return Candidate{std::string(ParallelismName(parallelism)), std::move(r), absl::Now() - begin};
}

// A plan made outside the plan search (PlanResult leaves the memory check to its caller) marked as not fitting
// where the plan model finds a device over its memory.
void CheckPlanMemory(const PlacementProblem& problem, Candidate& c) {
  if (c.result.ok() && !PlanMemoryStatus(*problem.costs, c.result->plan->plan, c.result->plan->evaluation).ok()) {
    c.result->evaluation.fits_memory = false;
  }
}

// AUTO's operator placement for the same throughput problem, as a plan of one replica per stage.
Candidate OperatorPlacement(const PlacementProblem& problem, const Budget& budget, const AutoOptions& options) {
  const absl::Time begin = absl::Now();
  PlacementProblem placing = problem;
  placing.parallelism = Parallelism::kOperator;
  placing.cost_model = CostModelKind::kDefault;
  absl::StatusOr<PlacerResult> placed = RunAuto(placing, budget, options);
  Candidate c{"operator placement", absl::UnknownError("not run"), absl::ZeroDuration()};
  if (!placed.ok()) {
    c.result = placed.status();
  } else {
    c.name = absl::StrCat("operator placement (", placed->algorithm, ")");
    // Scored on the same footing as the other plans: the problem's schedule, global batch and memory options.
    ParallelPlan plan = PlanFromPlacement(problem.graph(), placed->placement);
    CopyRunOptions(problem, plan);
    c.result = PlanResult(problem, std::move(plan), placed->algorithm);
    CheckPlanMemory(problem, c);
  }
  c.took = absl::Now() - begin;
  return c;
}

// How many accelerators data parallelism on part of the cluster uses: one (the step as one GPU runs it, which no
// plan on more should lose to), the first one, two, four... hosts (the gradients' all-reduce then crosses fewer
// network links, or none), and as many as a step has micro-batches where the cluster has more (data parallelism on
// all of them has replicas with nothing to run).
std::vector<int64_t> PartialDataSizes(const std::vector<std::vector<DeviceId>>& hosts, int64_t all,
                                      int64_t micro_batches) {
  std::vector<int64_t> sizes = {1};
  int64_t first_hosts = 0;
  for (size_t h = 0, next = 1; h + 1 < hosts.size(); ++h) {
    first_hosts += static_cast<int64_t>(hosts[h].size());
    if (h + 1 == next) sizes.push_back(std::min(first_hosts, micro_batches)), next *= 2;
  }
  if (micro_batches < all) sizes.push_back(micro_batches);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int64_t n) { return n >= all; }), sizes.end());
  return sizes;
}

// Data parallelism on `n` accelerators of the cluster, host by host, scored like the other plans.
Candidate DataOnPart(const PlacementProblem& problem, const std::vector<std::vector<DeviceId>>& hosts, int64_t n,
                     int64_t all) {
  const absl::Time begin = absl::Now();
  std::vector<DeviceId> devices;
  for (const auto& host : hosts) {
    for (DeviceId d : host) {
      if (static_cast<int64_t>(devices.size()) < n) devices.push_back(d);
    }
  }
  ParallelPlan plan = OneStagePlan(problem.graph(), std::move(devices));
  CopyRunOptions(problem, plan);
  Candidate c{n == 1 ? absl::StrCat("one device of ", all) : absl::StrCat("data on ", n, " of ", all, " devices"),
              PlanResult(problem, std::move(plan), kHybridPlacerName), absl::ZeroDuration()};
  CheckPlanMemory(problem, c);
  if (c.result.ok())
    c.result->notes.push_back(
        absl::StrCat("data plan on ", n, " of the cluster's ", all, " accelerators: 1 stage (replicas ", n, ")"));
  c.took = absl::Now() - begin;
  return c;
}

// An earlier candidate in `order` (before i) with the same plan, already simulated.
std::optional<size_t> SamePlan(const std::vector<Candidate>& candidates, const std::vector<size_t>& order, size_t i) {
  const PlacerResult& r = *candidates[i].result;
  for (size_t j : order) {
    if (j == i) break;
    const PlacerResult& o = *candidates[j].result;
    if (!r.plan.has_value() || !o.plan.has_value() || o.plan->simulated_time_per_sample < 0) continue;
    const ParallelPlan &a = r.plan->plan, &b = o.plan->plan;
    bool equal = a.stage_of_op == b.stage_of_op && a.schedule == b.schedule && a.global_batch == b.global_batch &&
                 a.num_stages() == b.num_stages();
    for (int32_t s = 0; equal && s < a.num_stages(); ++s) equal = a.stages[s].devices == b.stages[s].devices;
    if (equal) return j;
  }
  return std::nullopt;
}

// Plans that can still win are simulated after the searches (the hybrid search simulates its two best families
// too, the answer once more): the searches must leave that time. The data plan, found first and in milliseconds,
// is simulated now, and what that took prices each later simulation.
Budget LeaveTimeToSimulate(const PlacementProblem& problem, const Budget& budget, Candidate& data) {
  if (budget.deadline == absl::InfiniteFuture() || !Fits(data)) return budget;
  const absl::Time begin = absl::Now();
  ConfirmedTimePerSample(problem, *data.result);
  constexpr int kLaterSimulations = 3;
  Budget searching = budget;
  searching.deadline -= kLaterSimulations * (absl::Now() - begin);
  return searching;
}

absl::Status NoAnswer(const std::vector<Candidate>& candidates, const Budget& budget) {
  for (const Candidate& c : candidates) {
    if (!c.result.ok() && absl::IsFailedPrecondition(c.result.status())) return c.result.status();
  }
  for (const Candidate& c : candidates) {
    if (c.result.ok() && !c.result->evaluation.fits_memory) {
      return absl::FailedPreconditionError(absl::StrCat("no plan fits memory (", c.name, "'s does not)"));
    }
  }
  if (budget.Expired()) return budget.ExpiredStatus();
  return candidates.front().result.status();
}

}  // namespace

absl::StatusOr<PlacerResult> RunPlanPortfolio(const PlacementProblem& problem, const Budget& budget,
                                              const AutoOptions& options) {
  std::vector<Candidate> candidates;
  if (problem.parallelism == Parallelism::kHybrid) {
    candidates.push_back(Plan(problem, budget, Parallelism::kData));
    if (problem.global_batch > 0 && problem.cost_model == CostModelKind::kDefault) {
      const std::vector<std::vector<DeviceId>> hosts = parallel::AcceleratorsByHost(problem.costs->topology());
      int64_t all = 0;
      for (const auto& host : hosts) all += static_cast<int64_t>(host.size());
      for (int64_t n : PartialDataSizes(hosts, all, problem.global_batch))
        candidates.push_back(DataOnPart(problem, hosts, n, all));
    }
    const Budget searching = LeaveTimeToSimulate(problem, budget, candidates.front());
    for (Parallelism p : {Parallelism::kPipeline, Parallelism::kHybrid}) {
      candidates.push_back(Plan(problem, searching, p));
    }
    Budget share = searching;
    if (share.deadline != absl::InfiniteFuture()) share.deadline = absl::Now() + (share.deadline - absl::Now()) / 2;
    candidates.push_back(OperatorPlacement(problem, share, options));
  } else {
    candidates.push_back(Plan(problem, budget, problem.parallelism));
  }
  // Ranked by the time the simulator confirms (our model; PipeDream's is not simulated): a plan the model finds
  // faster but the simulation does not is not chosen over one it confirms.
  // The simulation only ever adds to the model's time, so a candidate the model already puts behind the best
  // confirmed time is not simulated (it cannot win), nor is a plan equal to one simulated before: simulations run
  // after the search and would otherwise take the deadline's time again.
  std::optional<size_t> best;
  std::vector<double> confirmed(candidates.size(), 0);
  std::vector<size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (Fits(candidates[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return candidates[a].result->evaluation.value < candidates[b].result->evaluation.value;
  });
  for (size_t i : order) {
    PlacerResult& r = *candidates[i].result;
    confirmed[i] = r.evaluation.value;
    const std::optional<size_t> same = SamePlan(candidates, order, i);
    if (same.has_value()) {
      r.plan->simulated_time_per_sample = candidates[*same].result->plan->simulated_time_per_sample;
      confirmed[i] = confirmed[*same];
    } else if (!best || r.evaluation.value < confirmed[*best]) {
      confirmed[i] = ConfirmedTimePerSample(problem, r);
    }
    if (!best || confirmed[i] < confirmed[*best]) best = i;
  }
  std::vector<std::string> notes;
  for (size_t i = 0; i < candidates.size(); ++i)
    notes.push_back(Describe(candidates[i], problem.global_batch, confirmed[i], best ? confirmed[*best] : 0));
  if (!best) return NoAnswer(candidates, budget);
  PlacerResult result = *std::move(candidates[*best].result);
  notes.push_back(absl::StrCat("winner: ", candidates[*best].name));
  for (std::string& n : result.notes) notes.push_back(absl::StrCat(candidates[*best].name, ": ", n));
  result.notes = std::move(notes);
  if (!absl::StartsWith(result.algorithm, "auto:")) result.algorithm = absl::StrCat("auto:", result.algorithm);
  CheckBySimulation(problem, result);
  return result;
}

}  // namespace placement::portfolio

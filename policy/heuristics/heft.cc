// heft: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu, IEEE TPDS 2002). Operators go in
// decreasing upward rank (mean time over the devices that can run them plus the longest mean-cost path to an
// exit, transfers at their mean over device pairs), each to the device where it finishes first, inserted into
// the earliest idle gap long enough for it; devices without memory for the operator's unit are skipped.
#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/list_scheduler.h"

namespace placement::heuristics {
namespace {

class HeftPlacer final : public HeuristicPlacer {
 public:
  HeftPlacer() : HeuristicPlacer("heft", "HEFT: decreasing upward rank, each operator to its earliest finish with gap insertion, memory-aware") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, const Budget& budget) const override {
    const CostModel& costs = *problem.costs;
    ListScheduleOptions options;
    options.mode = ListScheduleOptions::Mode::kStaticPriority;
    options.insertion = true;
    options.priority = UpwardRanks(costs, MeanOpTimes(costs), MeanTransferTimes(costs, units));
    if (budget.Expired()) return budget.ExpiredStatus();
    MemoryLedger ledger = NewLedger(problem, units);
    absl::StatusOr<ListScheduleResult> schedule = ListSchedule(costs, units, ledger, options, budget);
    if (!schedule.ok()) return schedule.status();
    return FinishPlacement(problem, ledger, name(), {absl::StrCat("HEFT schedule length ", schedule->makespan, " (no link contention)")});
  }
};

}  // namespace

std::unique_ptr<Placer> MakeHeftPlacer() { return std::make_unique<HeftPlacer>(); }

}  // namespace placement::heuristics

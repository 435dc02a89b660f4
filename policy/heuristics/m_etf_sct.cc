// m_etf and m_sct: Baechi's memory-constrained list schedulers (Jeon et al., SoCC 2020).
//
// m-ETF repeatedly starts the (ready operator, device) pair that can start earliest (Hwang et al.'s ETF),
// among devices with memory for the operator's unit. m-SCT adds the favourite-child relation of an LP
// relaxation (Hanen and Munier's small-communication-time scheduling): a device that has just run an operator
// waits for its favourite child when the child is ready and could start there no later than anywhere else.
// Where the LP gives no favourite, or cannot be solved in time, m-SCT behaves as m-ETF.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "policy/heuristics/favourite_child_lp.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/list_scheduler.h"

namespace placement::heuristics {
namespace {

// Solver time for the LP when the budget allows. CLP grows faster than linearly here: 10,000 operators take
// about 0.8 s, 30,000 about 10 s; beyond the limit m-SCT runs as m-ETF and says so.
constexpr double kMaxLpSeconds = 20;

class MEtfPlacer final : public HeuristicPlacer {
 public:
  MEtfPlacer()
      : HeuristicPlacer(
            "m_etf", "Baechi m-ETF: the operator that can start earliest goes next, on a device with memory for it") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    MemoryLedger ledger = NewLedger(problem, units, memory);
    ListScheduleOptions options;
    options.mode = ListScheduleOptions::Mode::kEarliestStart;
    absl::StatusOr<ListScheduleResult> schedule = ListSchedule(*problem.costs, units, ledger, options, budget);
    if (!schedule.ok()) return schedule.status();
    return FinishPlacement(problem, ledger, name());
  }
};

class MSctPlacer final : public HeuristicPlacer {
 public:
  MSctPlacer()
      : HeuristicPlacer("m_sct",
                        "Baechi m-SCT: m-ETF that keeps each LP-chosen favourite child on its parent's device") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const CostModel& costs = *problem.costs;
    double seconds = kMaxLpSeconds;
    if (budget.deadline != absl::InfiniteFuture()) {
      // Leave at least half the remaining time for scheduling and scoring.
      seconds = std::min(seconds, absl::ToDoubleSeconds(budget.deadline - absl::Now()) / 2);
    }
    std::vector<std::string> notes;
    ListScheduleOptions options;
    options.mode = ListScheduleOptions::Mode::kEarliestStart;
    if (seconds > 0) {
      FavouriteChildren favourites = SolveFavouriteChildren(costs, MeanTransferTimes(costs, units), seconds);
      if (favourites.solved) {
        notes.push_back(absl::StrCat("LP relaxation makespan ", favourites.lp_makespan, ", ", favourites.count,
                                     " favourite children"));
        options.favourite_child = std::move(favourites.child);
      } else {
        notes.push_back(absl::StrCat(favourites.note, "; scheduled as m-ETF"));
      }
    }
    if (budget.Expired()) return budget.ExpiredStatus();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    absl::StatusOr<ListScheduleResult> schedule = ListSchedule(costs, units, ledger, options, budget);
    if (!schedule.ok()) return schedule.status();
    if (!options.favourite_child.empty()) {
      notes.push_back(absl::StrCat(schedule->favourites_kept, " ran on their parent's device"));
    }
    return FinishPlacement(problem, ledger, name(), std::move(notes));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeMEtfPlacer() { return std::make_unique<MEtfPlacer>(); }
std::unique_ptr<Placer> MakeMSctPlacer() { return std::make_unique<MSctPlacer>(); }

}  // namespace placement::heuristics

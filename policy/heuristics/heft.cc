// heft: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu, IEEE TPDS 2002). Operators go in
// decreasing upward rank (mean time over the devices that can run them plus the longest mean-cost path to an
// exit, transfers at their mean over device pairs), each to the device where it finishes first, inserted into
// the earliest idle gap long enough for it; devices without memory for the operator's unit are skipped.
#include "policy/heuristics/heft.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/list_scheduler.h"

namespace placement::heuristics {
namespace {

std::vector<double> HeftPriority(const CostModel& costs, const UnitIndex& units) {
  return UpwardRanks(costs, MeanOpTimes(costs), MeanTransferTimes(costs, units));
}

// `candidates`: units x devices, or empty for every device.
absl::StatusOr<PlacerResult> RunHeft(const PlacementProblem& problem, const UnitIndex& units,
                                     std::vector<double> priority, std::vector<uint8_t> candidates,
                                     absl::string_view algorithm, MemoryModel memory, const Budget& budget,
                                     DeviceChooser choose = {}) {
  const CostModel& costs = *problem.costs;
  ListScheduleOptions options;
  options.mode = ListScheduleOptions::Mode::kStaticPriority;
  options.insertion = true;
  options.priority = std::move(priority);
  options.candidates = std::move(candidates);
  options.choose = std::move(choose);
  const bool narrowed = !options.candidates.empty();
  if (budget.Expired()) return budget.ExpiredStatus();
  MemoryLedger ledger(costs, units, memory);
  absl::StatusOr<ListScheduleResult> schedule = ListSchedule(costs, units, ledger, options, budget);
  if (!schedule.ok()) return schedule.status();
  std::vector<std::string> notes = {absl::StrCat("HEFT schedule length ", schedule->makespan, " (no link contention)")};
  if (narrowed) notes.push_back(absl::StrCat(schedule->fallbacks, " groups fell back to every device"));
  return FinishPlacement(problem, ledger, algorithm, std::move(notes));
}

class HeftPlacer final : public HeuristicPlacer {
 public:
  HeftPlacer()
      : HeuristicPlacer(
            "heft",
            "HEFT: decreasing upward rank, each operator to its earliest finish with gap insertion, memory-aware") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    return RunHeft(problem, units, HeftPriority(*problem.costs, units), {}, name(), memory, budget);
  }
};

}  // namespace

std::unique_ptr<Placer> MakeHeftPlacer() { return std::make_unique<HeftPlacer>(); }

absl::StatusOr<HeftWithCandidates> HeftWithCandidates::Prepare(const PlacementProblem& problem, const Budget& budget) {
  if (absl::Status s = CheckStart(problem, budget); !s.ok()) return s;
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(*problem.costs);
  if (!units.ok()) return units.status();
  std::vector<double> priority = HeftPriority(*problem.costs, *units);
  return HeftWithCandidates(problem, *std::move(units), std::move(priority));
}

absl::StatusOr<PlacerResult> HeftWithCandidates::Place(absl::Span<const uint8_t> op_candidates,
                                                       absl::string_view algorithm, const Budget& budget) const {
  if (budget.Expired()) return budget.ExpiredStatus();
  const CostModel& costs = *problem_->costs;
  const int32_t nd = costs.topology().num_devices();
  const size_t expected = static_cast<size_t>(costs.graph().num_ops()) * nd;
  if (op_candidates.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(algorithm, ": ", op_candidates.size(), " operator-device candidates for ", expected, " pairs"));
  }
  std::vector<uint8_t> unit_candidates(static_cast<size_t>(units_.num_units()) * nd, 1);
  for (OpId v = 0; v < costs.graph().num_ops(); ++v) {
    uint8_t* row = &unit_candidates[static_cast<size_t>(units_.unit_of(v)) * nd];
    const uint8_t* allow = &op_candidates[static_cast<size_t>(v) * nd];
    for (DeviceId d = 0; d < nd; ++d) row[d] &= allow[d] != 0 ? 1 : 0;
  }
  return PlaceWithMemoryFallback(*problem_, budget, [&](MemoryModel memory) {
    return RunHeft(*problem_, units_, priority_, unit_candidates, algorithm, memory, budget);
  });
}

absl::StatusOr<PlacerResult> HeftWithCandidates::PlaceChosen(const DeviceChooser& choose, absl::string_view algorithm,
                                                             const Budget& budget) const {
  if (budget.Expired()) return budget.ExpiredStatus();
  return PlaceWithMemoryFallback(*problem_, budget, [&](MemoryModel memory) {
    return RunHeft(*problem_, units_, priority_, {}, algorithm, memory, budget, choose);
  });
}

}  // namespace placement::heuristics

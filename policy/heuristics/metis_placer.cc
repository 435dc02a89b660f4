// metis: a k-way partition of the unit graph by METIS (Karypis and Kumar), part i = device i.
//
// Vertices are units (colocation groups contracted) weighted by their fastest time; edges carry the mean
// transfer time between them; target part weights follow device speeds. When memory could matter (a device's
// share of the work would carry more bytes than it holds), memory is a second balance constraint (ncon = 2)
// with targets proportional to capacity and a tolerance that keeps every part within its device. METIS's balance is a
// goal, not a guarantee, and it knows nothing of pins or device kinds, so AssignParts repairs what is left.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/partition_common.h"

#include <metis.h>

namespace placement::heuristics {
namespace {

static_assert(sizeof(idx_t) == sizeof(int32_t), "Debian's METIS uses 32-bit indices");

// METIS is asked for parts only when the graph has this many units per part.
constexpr int32_t kUnitsPerPart = 4;

// Each unit, heaviest first, on the device where it would end soonest given the work already there and its speed.
std::vector<int32_t> LargestFirst(const std::vector<double>& weight, const std::vector<double>& speed) {
  std::vector<int32_t> order(weight.size());
  for (size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int32_t>(u);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return weight[a] > weight[b]; });
  std::vector<double> load(speed.size(), 0);
  std::vector<int32_t> part(weight.size(), 0);
  for (int32_t u : order) {
    size_t best = 0;
    for (size_t d = 1; d < speed.size(); ++d) {
      const auto finish = [&](size_t e) { return (load[e] + weight[u]) / std::max(speed[e], 1e-30); };
      if (finish(d) < finish(best)) best = d;
    }
    load[best] += weight[u];
    part[u] = static_cast<int32_t>(best);
  }
  return part;
}

class MetisPlacer final : public HeuristicPlacer {
 public:
  MetisPlacer()
      : HeuristicPlacer(
            "metis",
            "METIS k-way partition of the unit graph (compute and memory balanced, cut transfers), memory repaired") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const int32_t nd = problem.topology().num_devices();
    const int32_t nu = units.num_units();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    std::vector<int32_t> part(nu, 0);
    std::vector<std::string> notes;
    if (nd > 1 && nu > 1 && nu < kUnitsPerPart * nd) {
      // METIS cannot split a graph into about as many parts as it has vertices (it prints "too many parts" or
      // "cannot bisect a graph with 0 vertices" and fails): the few units go, largest first, to the device they
      // would finish on first.
      const UnitGraph ug = ContractUnits(*problem.costs, units);
      part = LargestFirst(ug.vertex_weight, DeviceSpeeds(*problem.costs));
      notes.push_back(absl::StrCat(nu, " units on ", nd, " devices: largest first, not partitioned"));
    } else if (nd > 1 && nu > 1) {
      const UnitGraph ug = ContractUnits(*problem.costs, units);
      const std::vector<double> speed = DeviceSpeeds(*problem.costs);

      // Memory becomes a second constraint when a compute-balanced split could overfill a device: when some
      // device's share of the work, with half as much again for uneven memory, carries more bytes than it
      // holds. Otherwise it would only cost compute balance, and the repair handles the odd overflow.
      double need = 0, speeds = 0;
      std::vector<double> memory(nu);
      for (int32_t u = 0; u < nu; ++u) need += memory[u] = static_cast<double>(ledger.upper(u));
      for (double s : speed) speeds += s;
      idx_t ncon = 1;
      for (DeviceId d = 0; d < nd; ++d) {
        if (1.5 * need * speed[d] / speeds > static_cast<double>(ledger.capacity(d))) ncon = 2;
      }

      std::vector<idx_t> xadj(ug.xadj.begin(), ug.xadj.end()), adjncy(ug.adjncy.begin(), ug.adjncy.end());
      std::vector<int32_t> compute = ScaleToIntegers(ug.vertex_weight, 1e8 / ncon);
      std::vector<int32_t> bytes = ScaleToIntegers(memory, 1e8 / ncon);
      std::vector<int32_t> cut = ScaleToIntegers(ug.edge_weight);
      std::vector<idx_t> vwgt(static_cast<size_t>(nu) * ncon), adjwgt(cut.begin(), cut.end());
      for (int32_t u = 0; u < nu; ++u) {
        vwgt[static_cast<size_t>(u) * ncon] = compute[u];
        if (ncon == 2) vwgt[static_cast<size_t>(u) * ncon + 1] = bytes[u];
      }
      // Target shares: compute by speed; memory by capacity (a device without a limit counts as holding it all).
      std::vector<real_t> tpwgts(static_cast<size_t>(nd) * ncon);
      double capacities = 0;
      for (DeviceId d = 0; d < nd; ++d) {
        capacities += ledger.capacity(d) == kUnlimited ? need : static_cast<double>(ledger.capacity(d));
      }
      for (DeviceId d = 0; d < nd; ++d) {
        tpwgts[static_cast<size_t>(d) * ncon] = static_cast<real_t>(speed[d] / speeds);
        if (ncon == 2) {
          const double cap = ledger.capacity(d) == kUnlimited ? need : static_cast<double>(ledger.capacity(d));
          tpwgts[static_cast<size_t>(d) * ncon + 1] = static_cast<real_t>(cap / capacities);
        }
      }
      std::vector<real_t> ubvec = {1.05f, static_cast<real_t>(std::clamp(capacities / std::max(need, 1.0), 1.01, 1.5))};
      idx_t options[METIS_NOPTIONS];
      METIS_SetDefaultOptions(options);
      options[METIS_OPTION_SEED] = static_cast<idx_t>(problem.seed & 0x7fffffff);
      options[METIS_OPTION_NUMBERING] = 0;
      idx_t nvtxs = nu, nparts = nd, objval = 0, ncon_arg = ncon;
      std::vector<idx_t> parts(nu, 0);
      if (budget.Expired()) return budget.ExpiredStatus();
      const int rc = METIS_PartGraphKway(&nvtxs, &ncon_arg, xadj.data(), adjncy.data(), vwgt.data(), nullptr,
                                         adjncy.empty() ? nullptr : adjwgt.data(), &nparts, tpwgts.data(), ubvec.data(),
                                         options, &objval, parts.data());
      if (rc != METIS_OK) {
        return absl::InternalError(absl::StrCat("METIS_PartGraphKway failed with code ", rc, " on ", nu, " units"));
      }
      for (int32_t u = 0; u < nu; ++u) part[u] = parts[u];
      if (ncon == 2) notes.push_back("memory balanced as a second METIS constraint");
    }
    if (budget.Expired()) return budget.ExpiredStatus();
    absl::StatusOr<RepairStats> stats = AssignParts(problem, units, ledger, part, budget);
    if (!stats.ok()) return stats.status();
    for (std::string& note : RepairNotes(*stats)) notes.push_back(std::move(note));
    return FinishPlacement(problem, ledger, name(), std::move(notes));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeMetisPlacer() { return std::make_unique<MetisPlacer>(); }

}  // namespace placement::heuristics

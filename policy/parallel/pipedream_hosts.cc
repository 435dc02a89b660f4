// PipeDream's hierarchy (plan_search.h): a pipeline between hosts whose stages (blocks) are pipelines inside the
// hosts, every host of a block running the same inner pipeline on the same devices.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/parallel/pipedream_levels.h"

namespace placement::parallel::pipedream_internal {
namespace {

struct Cluster {
  std::vector<std::vector<DeviceId>> hosts;
  int32_t per_host = 0;
  double inside = 0, between = 0;  // bandwidths
  int32_t max_inner = 1, max_outer = 1;
};

// Where a block's inner pipeline comes from.
enum class Inner : uint8_t { kNone, kFromEmpty, kToFull, kMiddle };

struct Cell {
  double value = kNoPlan;
  int32_t from = -1;   // the block's first ideal (this cell's ideal for an idle host)
  int32_t hosts = 0;   // of the block; 0: the layer's host idles
  Inner inner = Inner::kNone;
};

int32_t DevicesUsed(const std::vector<ReplicaStep>& chain) {
  int32_t used = 0;
  for (const ReplicaStep& s : chain) used += s.replicas;
  return std::max(used, 1);
}

// One run of the outer DP at bound T over hosts, with the inner pipelines' times from DPs at bound max_outer T.
class HostDp {
 public:
  HostDp(const PlanLattice& l, const Cluster& c, double bound, const Budget& budget)
      : l_(l), s_(l.ideals), c_(c), bound_(bound * (1 + 1e-12)), budget_(budget),
        inner_cost_([this](int64_t i, int64_t j, int32_t, int32_t r, bool first) {
          return LevelStage(l_, c_.inside, i, j, r, first);
        }) {}

  // kNoPlan when nothing within the bound; the budget's status when it expires.
  absl::StatusOr<double> Run() {
    from_empty_ = InnerDp(s_.empty(), false);
    to_full_ = InnerDp(s_.empty(), true);
    if (from_empty_ == nullptr || to_full_ == nullptr) return budget_.ExpiredStatus();
    const int32_t hosts = static_cast<int32_t>(c_.hosts.size());
    cells_.assign(hosts + 1, std::vector<Cell>(s_.size()));
    cells_[0][s_.empty()] = Cell{0, static_cast<int32_t>(s_.empty()), 0, Inner::kNone};
    for (int32_t m = 1; m <= hosts; ++m) {
      for (int64_t j = 0; j < s_.size(); ++j) {
        if (cells_[m - 1][j].value <= bound_) cells_[m][j] = Cell{cells_[m - 1][j].value, static_cast<int32_t>(j), 0, Inner::kNone};
      }
      for (int32_t r = 1; r <= std::min(m, c_.max_outer); ++r) {
        if (absl::Status st = Blocks(m, r); !st.ok()) return st;
      }
    }
    return cells_[hosts][s_.full()].value;
  }

  // The plan's stages and their groups.
  std::pair<std::vector<ReplicaStep>, std::vector<std::vector<DeviceId>>> Plan() const {
    std::vector<std::pair<std::vector<ReplicaStep>, std::pair<int32_t, int32_t>>> blocks;  // inner chain, (host, hosts)
    int32_t m = static_cast<int32_t>(c_.hosts.size());
    int64_t j = s_.full();
    while (m > 0 && j != s_.empty()) {
      const Cell& c = cells_[m][j];
      if (c.hosts > 0) blocks.push_back({InnerChain(c, j), {m - c.hosts, c.hosts}});
      m -= std::max(c.hosts, 1);
      j = c.hosts > 0 ? c.from : j;
    }
    std::reverse(blocks.begin(), blocks.end());
    std::vector<ReplicaStep> steps;
    std::vector<std::vector<DeviceId>> groups;
    for (const auto& [chain, where] : blocks) {
      for (const ReplicaStep& step : chain) {
        steps.push_back(step);
        groups.push_back(Group(c_.hosts, where.first, where.second, step));
      }
    }
    return {steps, groups};
  }

  int64_t pairs() const {
    int64_t p = 0;
    for (const auto& [start, dp] : inner_) p += dp->pairs();
    return p;
  }

 private:
  // The DP of inner pipelines from `start` (forward) or to the full ideal (backward); null when the budget ran out.
  const ReplicaDp* InnerDp(int64_t start, bool backward) {
    const int64_t key = backward ? -1 - start : start;
    auto it = inner_.find(key);
    if (it != inner_.end()) return it->second.get();
    ReplicaDpOptions o{start, s_.full(), c_.per_host, c_.max_inner, bound_ * c_.max_outer, backward};
    o.whole_chain = false;  // the rest of the graph runs on other hosts
    auto dp = std::make_unique<ReplicaDp>(s_, o, inner_cost_, budget_);
    if (!dp->Run()) return nullptr;
    return inner_.emplace(key, std::move(dp)).first->second.get();
  }

  std::vector<ReplicaStep> InnerChain(const Cell& c, int64_t j) const {
    switch (c.inner) {
      case Inner::kFromEmpty: return from_empty_->Chain(j);
      case Inner::kToFull: return to_full_->Chain(c.from);
      default: return inner_.at(c.from)->Chain(j);
    }
  }

  // Blocks on r hosts ending at layer m: from the empty ideal, to the full one, or between (three or more hosts).
  absl::Status Blocks(int32_t m, int32_t r) {
    const std::vector<Cell>& before = cells_[m - r];
    const bool last_layer = m == static_cast<int32_t>(c_.hosts.size());
    for (int64_t i = 0; i < s_.size(); ++i) {
      if (!(before[i].value <= bound_)) continue;
      if (i == s_.empty()) {
        for (int64_t j = 0; j < s_.size(); ++j) Offer(m, r, i, j, before[i].value, from_empty_, Inner::kFromEmpty);
        continue;
      }
      Offer(m, r, i, s_.full(), before[i].value, to_full_, Inner::kToFull);
      if (last_layer) continue;
      const ReplicaDp* middle = InnerDp(i, false);
      if (middle == nullptr) return budget_.ExpiredStatus();
      for (int64_t j = 0; j < s_.size(); ++j) {
        if (j != s_.full()) Offer(m, r, i, j, before[i].value, middle, Inner::kMiddle);
      }
    }
    return absl::OkStatus();
  }

  // The block i -> j on r hosts after a chain worth `prior`, its inner pipeline from `dp`.
  void Offer(int32_t m, int32_t r, int64_t i, int64_t j, double prior, const ReplicaDp* dp, Inner kind) {
    if (j == i) return;
    const double inner = dp->Best(kind == Inner::kToFull ? i : j);
    if (!std::isfinite(inner) || inner / r > bound_) return;
    const int32_t devices = r > 1 ? DevicesUsed(kind == Inner::kToFull ? dp->Chain(i) : dp->Chain(j)) : 1;
    double t = PipeDreamStageSeconds(inner, l_.weight_bytes[j] - l_.weight_bytes[i], r, c_.between, devices);
    if (i != s_.empty()) {
      t = std::max(t, PipeDreamTransferSeconds(s_.cross_weight(i), r, c_.between));
      if (j != s_.full()) t = std::max(t, PipeDreamTransferSeconds(s_.cross_weight(j), r, c_.between));
    }
    const double value = std::max(prior, t);
    Cell& cell = cells_[m][j];
    if (value <= bound_ && value < cell.value) cell = Cell{value, static_cast<int32_t>(i), r, kind};
  }

  const PlanLattice& l_;
  const IdealSet& s_;
  const Cluster& c_;
  const double bound_;
  const Budget& budget_;
  std::function<double(int64_t, int64_t, int32_t, int32_t, bool)> inner_cost_;
  std::map<int64_t, std::unique_ptr<ReplicaDp>> inner_;
  const ReplicaDp* from_empty_ = nullptr;
  const ReplicaDp* to_full_ = nullptr;
  std::vector<std::vector<Cell>> cells_;
};

absl::StatusOr<Cluster> Hosts(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o) {
  Cluster c;
  c.hosts = AcceleratorsByHost(costs, l);
  c.per_host = static_cast<int32_t>(c.hosts.front().size());
  std::vector<DeviceId> others;
  c.inside = c.between = std::numeric_limits<double>::infinity();
  for (size_t h = 0; h < c.hosts.size(); ++h) {
    if (static_cast<int32_t>(c.hosts[h].size()) != c.per_host) {
      return absl::UnimplementedError(absl::StrCat("PipeDream's cost model plans hosts of equal size, but host ", h + 1,
                                                   " has ", c.hosts[h].size(), " accelerators and host 1 has ", c.per_host));
    }
    c.inside = std::min(c.inside, SlowestPath(costs.topology(), c.hosts[h], c.hosts[h]));
    if (h > 0) c.between = std::min(c.between, SlowestPath(costs.topology(), c.hosts[0], c.hosts[h]));
  }
  const bool straight = o.parallelism == Parallelism::kPipeline;
  c.max_inner = straight ? 1 : c.per_host;
  c.max_outer = straight ? 1 : static_cast<int32_t>(c.hosts.size());
  return c;
}

}  // namespace

absl::StatusOr<PlanSearchResult> SearchHosts(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                             const Budget& budget) {
  absl::StatusOr<Cluster> c = Hosts(costs, l, o);
  if (!c.ok()) return c.status();
  const IdealSet& s = l.ideals;
  const int32_t hosts = static_cast<int32_t>(c->hosts.size());
  // Pure data parallelism: one block on every host, one inner stage on every device of each.
  const ReplicaStep all{s.empty(), s.full(), 0, c->per_host};
  const double data = PipeDreamStageSeconds(LevelStage(l, c->inside, s.empty(), s.full(), c->per_host, true),
                                            l.weight_bytes[s.full()], hosts, c->between, c->per_host);
  if (o.parallelism == Parallelism::kData) {
    PlanSearchResult r = Assemble(l, {all}, {Group(c->hosts, 0, hosts, all)});
    r.dp_value = data;
    return r;
  }
  std::unique_ptr<HostDp> best;
  PlanSearchResult out;
  const double upper = o.parallelism == Parallelism::kPipeline ? std::numeric_limits<double>::max() : data;
  absl::StatusOr<double> found = GrowBound(s.work(s.full()) / (hosts * c->per_host), upper, budget,
                                           [&](double bound) -> absl::StatusOr<double> {
    auto dp = std::make_unique<HostDp>(l, *c, bound, budget);
    absl::StatusOr<double> v = dp->Run();
    out.pairs += dp->pairs();
    if (v.ok() && std::isfinite(*v)) best = std::move(dp);
    return v;
  }, &out.dp_runs);
  if (!found.ok()) return found.status();
  if (best == nullptr) return absl::InternalError("PipeDream's hierarchy found no plan at its upper bound");
  auto [steps, groups] = best->Plan();
  PlanSearchResult r = Assemble(l, steps, std::move(groups));
  r.dp_value = *found;
  r.pairs = out.pairs;
  r.dp_runs = out.dp_runs;
  return r;
}

}  // namespace placement::parallel::pipedream_internal

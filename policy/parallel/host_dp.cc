#include "policy/parallel/host_dp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement::parallel {
namespace {

// Where a block's inner pipeline comes from.
enum class Inner : uint8_t { kNone, kFromEmpty, kToFull, kMiddle };

struct Cell {
  double value = kNoPlan;
  int32_t from = -1;  // the block's first ideal (this cell's ideal for an idle host)
  int32_t hosts = 0;  // of the block; 0: the layer's host idles
  Inner inner = Inner::kNone;
};

// Devices [offset, offset + replicas) of every host in [first_host, first_host + hosts), the hosts' k-th devices
// together: micro-batch m then runs on host m % hosts in every stage of a block, so that inside a block tensors
// never leave their host.
std::vector<DeviceId> Group(const std::vector<std::vector<DeviceId>>& by_host, int32_t first_host, int32_t hosts,
                            const ReplicaStep& step) {
  std::vector<DeviceId> group;
  for (int32_t k = step.offset; k < step.offset + step.replicas; ++k) {
    for (int32_t h = first_host; h < first_host + hosts; ++h) group.push_back(by_host[h][k]);
  }
  return group;
}

// One run of the outer DP at bound T over hosts, the inner pipelines' times from DPs the costs scale.
class HostDp {
 public:
  HostDp(const PlanLattice& l, const HostLayout& layout, const HostCosts& costs, double bound, const Budget& budget)
      : s_(l.ideals), h_(layout), c_(costs), bound_(bound * (1 + 1e-12)), raw_bound_(bound), budget_(budget) {}

  // kNoPlan when nothing within the bound; the budget's status when it expires.
  absl::StatusOr<double> Run() {
    const int32_t hosts = static_cast<int32_t>(h_.hosts.size());
    cells_.assign(hosts + 1, std::vector<Cell>(s_.size()));
    cells_[0][s_.empty()] = Cell{0, static_cast<int32_t>(s_.empty()), 0, Inner::kNone};
    for (int32_t m = 1; m <= hosts; ++m) {
      for (int64_t j = 0; j < s_.size(); ++j) {
        if (cells_[m - 1][j].value <= bound_)
          cells_[m][j] = Cell{cells_[m - 1][j].value, static_cast<int32_t>(j), 0, Inner::kNone};
      }
      for (int32_t r = 1; r <= std::min(m, h_.max_outer); ++r) {
        if (absl::Status st = Blocks(m, r); !st.ok()) return st;
      }
    }
    return cells_[hosts][s_.full()].value;
  }

  // The plan's stages and their groups.
  std::pair<std::vector<ReplicaStep>, std::vector<std::vector<DeviceId>>> Plan() const {
    std::vector<std::pair<std::vector<ReplicaStep>, std::pair<int32_t, int32_t>>> blocks;  // inner chain, (host, hosts)
    int32_t m = static_cast<int32_t>(h_.hosts.size());
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
        groups.push_back(Group(h_.hosts, where.first, where.second, step));
      }
    }
    return {steps, groups};
  }

  int64_t pairs() const {
    int64_t p = 0;
    for (const auto& [key, dp] : inner_) p += dp->pairs();
    return p;
  }

 private:
  using Key = std::tuple<int64_t, bool, int32_t>;  // start, backward, hosts (0 when the costs ignore them)

  // The DP of inner pipelines from `start` (forward) or to the full ideal (backward) for blocks of `hosts` hosts;
  // null when the budget ran out.
  const ReplicaDp* InnerDp(int64_t start, bool backward, int32_t hosts) {
    const Key key{backward ? s_.empty() : start, backward, c_.per_host_count ? hosts : 0};
    auto it = inner_.find(key);
    if (it != inner_.end()) return it->second.get();
    ReplicaDpOptions o{std::get<0>(key), s_.full(), h_.per_host, h_.max_inner, c_.inner_bound(raw_bound_, hosts),
                       backward};
    o.whole_chain = false;  // the rest of the graph runs on other hosts
    o.work_per_bound = c_.work_per_bound(hosts);
    auto cost = [this, hosts](int64_t i, int64_t j, int32_t offset, int32_t r, bool first) {
      return c_.stage(i, j, offset, r, first, hosts);
    };
    costs_.push_back(std::make_unique<std::function<double(int64_t, int64_t, int32_t, int32_t, bool)>>(cost));
    auto dp = std::make_unique<ReplicaDp>(s_, o, *costs_.back(), budget_);
    if (!dp->Run()) return nullptr;
    return inner_.emplace(key, std::move(dp)).first->second.get();
  }

  std::vector<ReplicaStep> InnerChain(const Cell& c, int64_t j) const {
    const Key key{c.inner == Inner::kToFull ? s_.empty() : c.from, c.inner == Inner::kToFull,
                  c_.per_host_count ? c.hosts : 0};
    const ReplicaDp& dp = *inner_.at(key);
    return c.inner == Inner::kToFull ? dp.Chain(c.from) : dp.Chain(j);
  }

  // Blocks on r hosts ending at layer m: from the empty ideal, to the full one, or between (three or more hosts).
  absl::Status Blocks(int32_t m, int32_t r) {
    const std::vector<Cell>& before = cells_[m - r];
    const bool last_layer = m == static_cast<int32_t>(h_.hosts.size()) || !h_.middle_blocks;
    for (int64_t i = 0; i < s_.size(); ++i) {
      if (!(before[i].value <= bound_)) continue;
      const bool from_empty = i == s_.empty();
      const ReplicaDp* forward = from_empty || !last_layer ? InnerDp(i, false, r) : nullptr;
      const ReplicaDp* to_full = from_empty ? nullptr : InnerDp(i, true, r);
      if ((from_empty || !last_layer) && forward == nullptr) return budget_.ExpiredStatus();
      if (!from_empty && to_full == nullptr) return budget_.ExpiredStatus();
      if (!from_empty) Offer(m, r, i, s_.full(), before[i].value, *to_full, Inner::kToFull);
      if (forward == nullptr) continue;
      for (int64_t j = 0; j < s_.size(); ++j) {
        if (from_empty || j != s_.full())
          Offer(m, r, i, j, before[i].value, *forward, from_empty ? Inner::kFromEmpty : Inner::kMiddle);
      }
    }
    return absl::OkStatus();
  }

  // The block i -> j on r hosts after a chain worth `prior`, its inner pipeline from `dp`.
  void Offer(int32_t m, int32_t r, int64_t i, int64_t j, double prior, const ReplicaDp& dp, Inner kind) {
    if (j == i) return;
    const int64_t at = kind == Inner::kToFull ? i : j;
    const double inner = dp.Best(at);
    if (!std::isfinite(inner)) return;
    const double value = std::max(prior, c_.block(inner, i, j, r, r > 1 ? dp.Chain(at) : std::vector<ReplicaStep>{}));
    Cell& cell = cells_[m][j];
    if (value <= bound_ && value < cell.value) cell = Cell{value, static_cast<int32_t>(i), r, kind};
  }

  const IdealSet& s_;
  const HostLayout& h_;
  const HostCosts& c_;
  const double bound_, raw_bound_;
  const Budget& budget_;
  std::vector<std::unique_ptr<std::function<double(int64_t, int64_t, int32_t, int32_t, bool)>>> costs_;
  std::map<Key, std::unique_ptr<ReplicaDp>> inner_;
  std::vector<std::vector<Cell>> cells_;
};

}  // namespace

int32_t DevicesUsed(const std::vector<ReplicaStep>& chain) {
  int32_t used = 0;
  for (const ReplicaStep& s : chain) used += s.replicas;
  return std::max(used, 1);
}

absl::StatusOr<HostLayout> LayoutHosts(const CostModel& costs, const PlanLattice& l, bool straight, bool across_hosts) {
  HostLayout layout;
  layout.hosts = AcceleratorsByHost(costs.topology());
  layout.per_host = static_cast<int32_t>(layout.hosts.front().size());
  for (size_t h = 0; h < layout.hosts.size(); ++h) {
    if (static_cast<int32_t>(layout.hosts[h].size()) != layout.per_host) {
      return absl::UnimplementedError(absl::StrCat("plans on several hosts need hosts of equal size, but host ", h + 1,
                                                   " has ", layout.hosts[h].size(), " accelerators and host 1 has ",
                                                   layout.per_host));
    }
  }
  layout.max_inner = straight ? 1 : layout.per_host;
  layout.max_outer = straight || !across_hosts ? 1 : static_cast<int32_t>(layout.hosts.size());
  return layout;
}

absl::StatusOr<PlanSearchResult> SearchBlocks(const PlanLattice& l, const HostLayout& layout, const HostCosts& costs,
                                              double lower, double upper, const Budget& budget) {
  std::unique_ptr<HostDp> best;
  PlanSearchResult out;
  absl::StatusOr<double> found = GrowBound(
      lower, upper, budget,
      [&](double bound) -> absl::StatusOr<double> {
        auto dp = std::make_unique<HostDp>(l, layout, costs, bound, budget);
        absl::StatusOr<double> v = dp->Run();
        out.pairs += dp->pairs();
        if (v.ok() && std::isfinite(*v)) best = std::move(dp);
        return v;
      },
      &out.dp_runs);
  if (!found.ok()) return found.status();
  if (best == nullptr) return absl::FailedPreconditionError("no plan of blocks of hosts fits the devices' memory");
  auto [steps, groups] = best->Plan();
  out.plan.stage_of_op = StagesOfOps(l, steps);
  for (auto& g : groups) out.plan.stages.push_back(PlanStage{std::move(g)});
  out.dp_value = *found;
  return out;
}

}  // namespace placement::parallel

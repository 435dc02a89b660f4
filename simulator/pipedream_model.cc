#include "simulator/pipedream_model.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "simulator/plan_facts.h"

namespace placement {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Block {
  int32_t first = 0, last = 0;  // stages
  std::vector<int32_t> hosts;
  int32_t devices_per_host = 0;
};

struct Levels {
  std::vector<int32_t> per_host;  // per stage: its devices on each of its hosts
  std::vector<Block> blocks;
  double inner_bandwidth = kInf, outer_bandwidth = kInf;
};

absl::Status NotNested(int32_t stage, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("PipeDream's cost model reads plans whose stages nest in hosts, but stage ", stage + 1, " ", why));
}

// The slowest path between devices of the plan on one host, and between devices on different hosts.
void LinkBandwidths(const Topology& t, const ParallelPlan& plan, Levels& levels) {
  std::vector<DeviceId> all;
  for (const PlanStage& s : plan.stages) all.insert(all.end(), s.devices.begin(), s.devices.end());
  for (DeviceId a : all) {
    for (DeviceId b : all) {
      if (a == b) continue;
      double& slowest = t.device(a).host == t.device(b).host ? levels.inner_bandwidth : levels.outer_bandwidth;
      slowest = std::min(slowest, t.path(a, b).bandwidth);
    }
  }
}

absl::StatusOr<Levels> NestPlan(const Topology& t, const ParallelPlan& plan) {
  Levels levels;
  std::vector<std::vector<int32_t>> hosts_of(plan.stages.size());
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    std::map<int32_t, int32_t> count;
    for (DeviceId d : plan.stages[s].devices) ++count[t.device(d).host];
    for (const auto& [host, n] : count) {
      if (n != count.begin()->second) return NotNested(s, "has different numbers of devices on its hosts");
      hosts_of[s].push_back(host);
    }
    levels.per_host.push_back(count.begin()->second);
    if (s == 0 || hosts_of[s] != hosts_of[s - 1]) levels.blocks.push_back(Block{s, s, hosts_of[s], 0});
    levels.blocks.back().last = s;
    levels.blocks.back().devices_per_host += count.begin()->second;
  }
  std::vector<int32_t> block_of_host(t.num_devices() + 1, -1);
  for (size_t b = 0; b < levels.blocks.size(); ++b) {
    for (int32_t h : levels.blocks[b].hosts) {
      if (h >= static_cast<int32_t>(block_of_host.size())) block_of_host.resize(h + 1, -1);
      if (block_of_host[h] >= 0)
        return NotNested(levels.blocks[b].first, "shares a host with an earlier stage on other hosts");
      block_of_host[h] = static_cast<int32_t>(b);
    }
  }
  LinkBandwidths(t, plan, levels);
  return levels;
}

// What PipeDream charges the cut after each stage.
std::vector<double> AntichainCuts(const Graph& g, const ParallelPlan& plan) {
  const AntichainActivations activations(g);
  std::vector<double> cuts(plan.stages.size(), 0);
  std::vector<uint8_t> inside(g.num_ops(), 0);
  for (int32_t k = 0; k + 1 < plan.num_stages(); ++k) {
    for (OpId op = 0; op < g.num_ops(); ++op) inside[op] = plan.stage_of_op[op] <= k;
    cuts[k] = activations.CutBytes(inside);
  }
  return cuts;
}

// The block's pipeline inside its hosts: its stages at the intra-host bandwidth, the first paying no transfer.
void InnerTime(const std::vector<double>& cut, const plan_internal::PlanFacts& f, const Levels& levels,
               const Block& block, int32_t num_stages, std::vector<double>& stage_times) {
  for (int32_t s = block.first; s <= block.last; ++s) {
    const int32_t r = levels.per_host[s];
    double t = PipeDreamStageSeconds(f.stages[s].work, static_cast<double>(f.stages[s].weight_bytes), r,
                                     levels.inner_bandwidth);
    if (s != block.first) {
      t = std::max(t, PipeDreamTransferSeconds(cut[s - 1], r, levels.inner_bandwidth));
      if (s + 1 < num_stages) t = std::max(t, PipeDreamTransferSeconds(cut[s], r, levels.inner_bandwidth));
    }
    stage_times[s] = t;
  }
}

}  // namespace

AntichainActivations::AntichainActivations(const Graph& g) : graph_(&g), index_(g.num_ops(), -1) {
  for (OpId op : g.topo_order()) {
    if (g.is_backward(op)) continue;
    index_[op] = static_cast<int32_t>(forward_.size());
    forward_.push_back(op);
    double bytes = 0;
    for (TensorId t = g.first_output(op); t < g.first_output(op + 1); ++t)
      bytes += static_cast<double>(g.tensor(t).bytes);
    activation_.push_back(bytes);
  }
  const size_t n = forward_.size();
  words_ = static_cast<int32_t>((n + 63) / 64);
  successors_.resize(n);
  ancestors_.assign(n * words_, 0);
  for (size_t v = 0; v < n; ++v) {  // topological: every ancestor is done before its descendants
    for (EdgeId e : g.in_edges(forward_[v])) {
      const int32_t p = index_[g.edge(e).src];
      if (p < 0) continue;
      successors_[p].push_back(static_cast<int32_t>(v));
      uint64_t* mine = &ancestors_[v * words_];
      const uint64_t* theirs = &ancestors_[static_cast<size_t>(p) * words_];
      for (int32_t w = 0; w < words_; ++w) mine[w] |= theirs[w];
      mine[p >> 6] |= uint64_t{1} << (p & 63);
    }
  }
}

double AntichainActivations::CutBytes(const std::vector<uint8_t>& inside) const {
  const size_t n = forward_.size();
  std::vector<uint8_t> counted(n, 0);
  const auto in = [&](int32_t v) { return inside[forward_[v]] != 0; };
  double bytes = 0;
  for (size_t a = 0; a < n; ++a) {
    if (!in(static_cast<int32_t>(a))) continue;
    const bool maximal = std::none_of(successors_[a].begin(), successors_[a].end(), [&](int32_t o) { return in(o); });
    if (!maximal) continue;
    if (!counted[a]) bytes += activation_[a];
    counted[a] = 1;
    const uint64_t* anc = &ancestors_[a * words_];
    for (int32_t w = 0; w < words_; ++w) {
      for (uint64_t x = anc[w]; x != 0; x &= x - 1) {
        const int32_t p = w * 64 + __builtin_ctzll(x);
        if (counted[p]) continue;
        const bool leaves = std::any_of(successors_[p].begin(), successors_[p].end(), [&](int32_t o) {
          return o != static_cast<int32_t>(a) && !((anc[o >> 6] >> (o & 63)) & 1);
        });
        if (leaves) {
          counted[p] = 1;
          bytes += activation_[p];
        }
      }
    }
  }
  return bytes;
}

double PipeDreamStageSeconds(double compute, double param_bytes, int32_t replicas, double bandwidth,
                             int32_t inner_workers) {
  if (replicas <= 1) return compute;
  const double r = replicas;
  return (compute + 4 * (r - 1) * param_bytes / (bandwidth * r) / inner_workers) / r;
}

double PipeDreamTransferSeconds(double activation_bytes, int32_t replicas, double bandwidth) {
  return activation_bytes > 0 ? 2 * activation_bytes / (bandwidth * replicas) : 0;
}

absl::StatusOr<PipeDreamScore> ScorePipeDream(const CostModel& costs, const ParallelPlan& plan,
                                              const plan_internal::PlanFacts& facts) {
  absl::StatusOr<Levels> levels = NestPlan(costs.topology(), plan);
  if (!levels.ok()) return levels.status();
  const int32_t n = plan.num_stages();
  PipeDreamScore score;
  score.stage_times.assign(n, 0);
  const std::vector<double> cuts = AntichainCuts(costs.graph(), plan);
  const double* cut = cuts.data();
  for (size_t b = 0; b < levels->blocks.size(); ++b) {
    const Block& block = levels->blocks[b];
    const int32_t hosts = static_cast<int32_t>(block.hosts.size());
    std::vector<double> inner(n, 0);
    InnerTime(cuts, facts, *levels, block, n, inner);
    double weights = 0;
    for (int32_t s = block.first; s <= block.last; ++s) weights += static_cast<double>(facts.stages[s].weight_bytes);
    // The block is a stage of the pipeline between hosts: each of its stages at that level, the transfers
    // into and out of the block on its first and last stage.
    for (int32_t s = block.first; s <= block.last; ++s) {
      score.stage_times[s] =
          PipeDreamStageSeconds(inner[s], weights, hosts, levels->outer_bandwidth, block.devices_per_host);
    }
    if (b > 0) {
      double& first = score.stage_times[block.first];
      first = std::max(first, PipeDreamTransferSeconds(cut[block.first - 1], hosts, levels->outer_bandwidth));
      double& last = score.stage_times[block.last];
      if (block.last + 1 < n)
        last = std::max(last, PipeDreamTransferSeconds(cut[block.last], hosts, levels->outer_bandwidth));
    }
  }
  const auto slowest = std::max_element(score.stage_times.begin(), score.stage_times.end());
  score.value = *slowest;
  score.bottleneck = absl::StrCat("stage ", slowest - score.stage_times.begin() + 1);
  return score;
}

}  // namespace placement

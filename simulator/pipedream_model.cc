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
  return absl::UnimplementedError(absl::StrCat("PipeDream's cost model reads plans whose stages nest in hosts, but stage ",
                                               stage + 1, " ", why));
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
      if (block_of_host[h] >= 0) return NotNested(levels.blocks[b].first, "shares a host with an earlier stage on other hosts");
      block_of_host[h] = static_cast<int32_t>(b);
    }
  }
  LinkBandwidths(t, plan, levels);
  return levels;
}

// The block's pipeline inside its hosts: its stages at the intra-host bandwidth, the first paying no transfer.
void InnerTime(const plan_internal::PlanFacts& f, const Levels& levels, const Block& block, int32_t num_stages,
               std::vector<double>& stage_times) {
  const std::vector<double>& cut = f.cut_activation_bytes;
  for (int32_t s = block.first; s <= block.last; ++s) {
    const int32_t r = levels.per_host[s];
    double t = PipeDreamStageSeconds(f.stages[s].work, static_cast<double>(f.stages[s].weight_bytes), r, levels.inner_bandwidth);
    if (s != block.first) {
      t = std::max(t, PipeDreamTransferSeconds(cut[s - 1], r, levels.inner_bandwidth));
      if (s + 1 < num_stages) t = std::max(t, PipeDreamTransferSeconds(cut[s], r, levels.inner_bandwidth));
    }
    stage_times[s] = t;
  }
}

}  // namespace

double PipeDreamStageSeconds(double compute, double param_bytes, int32_t replicas, double bandwidth, int32_t inner_workers) {
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
  const double* cut = facts.cut_activation_bytes.data();
  for (size_t b = 0; b < levels->blocks.size(); ++b) {
    const Block& block = levels->blocks[b];
    const int32_t hosts = static_cast<int32_t>(block.hosts.size());
    std::vector<double> inner(n, 0);
    InnerTime(facts, *levels, block, n, inner);
    double weights = 0;
    for (int32_t s = block.first; s <= block.last; ++s) weights += static_cast<double>(facts.stages[s].weight_bytes);
    // The block is a stage of the pipeline between hosts: each of its stages at that level, the transfers
    // into and out of the block on its first and last stage.
    for (int32_t s = block.first; s <= block.last; ++s) {
      score.stage_times[s] = PipeDreamStageSeconds(inner[s], weights, hosts, levels->outer_bandwidth, block.devices_per_host);
    }
    if (b > 0) {
      double& first = score.stage_times[block.first];
      first = std::max(first, PipeDreamTransferSeconds(cut[block.first - 1], hosts, levels->outer_bandwidth));
      double& last = score.stage_times[block.last];
      if (block.last + 1 < n) last = std::max(last, PipeDreamTransferSeconds(cut[block.last], hosts, levels->outer_bandwidth));
    }
  }
  const auto slowest = std::max_element(score.stage_times.begin(), score.stage_times.end());
  score.value = *slowest;
  score.bottleneck = absl::StrCat("stage ", slowest - score.stage_times.begin() + 1);
  return score;
}

}  // namespace placement

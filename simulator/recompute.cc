#include "simulator/recompute.h"

#include <algorithm>
#include <limits>

namespace placement::plan_internal {
namespace {

constexpr int32_t kMostSegments = 128;

// One stage's forward in topological order: bytes its own backward keeps of what each position makes, and the
// bytes crossing the cut before each position.
struct StageLine {
  std::vector<int64_t> kept;  // per position
  std::vector<int64_t> cut;   // per position + 1: cut[p] crosses between p - 1 and p
  int64_t inputs = 0;         // from other stages, read by its forward or backward
};

std::vector<StageLine> Lines(const Graph& g, const ParallelPlan& plan) {
  std::vector<StageLine> lines(plan.stages.size());
  std::vector<int32_t> pos(g.num_ops(), -1);  // each forward operator's place in its stage
  for (OpId u : g.topo_order()) {
    if (g.is_backward(u)) continue;
    StageLine& line = lines[plan.stage_of_op[u]];
    pos[u] = static_cast<int32_t>(line.kept.size());
    line.kept.push_back(0);
  }
  for (StageLine& line : lines) line.cut.assign(line.kept.size() + 1, 0);
  std::vector<int32_t> counted(plan.stages.size(), -1);  // the tensor last counted as a stage's input
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (g.is_backward(u)) continue;
    const int32_t a = plan.stage_of_op[u];
    for (EdgeId e = g.out_begin(u); e < g.out_end(u); ++e) {
      const Edge& edge = g.edge(e);
      const TensorId t = g.edge_tensor(e);
      const int64_t bytes = g.tensor(t).bytes;
      const int32_t b = plan.stage_of_op[edge.dst];
      if (b != a) {
        if (counted[b] != t) lines[b].inputs += bytes;
        counted[b] = t;
      } else if (g.is_backward(edge.dst)) {
        if (counted[a] != t) lines[a].kept[pos[u]] += bytes;
        counted[a] = t;
      } else if (pos[edge.dst] > pos[u]) {  // crosses every cut between the two
        lines[a].cut[pos[u] + 1] += bytes;
        lines[a].cut[pos[edge.dst] + 1] -= bytes;
      }
    }
  }
  for (StageLine& line : lines) {
    for (size_t p = 1; p < line.cut.size(); ++p) line.cut[p] += line.cut[p - 1];
  }
  return lines;
}

// The best split of one stage into segments for `in_flight` micro-batches.
StageCheckpoints Split(const StageLine& line, int32_t in_flight) {
  const int32_t n = static_cast<int32_t>(line.kept.size());
  std::vector<int64_t> prefix(n + 1, 0);
  for (int32_t p = 0; p < n; ++p) prefix[p + 1] = prefix[p] + line.kept[p];
  StageCheckpoints best{line.inputs, prefix[n], 1};
  int64_t best_cost = line.inputs * in_flight + prefix[n];
  for (int32_t k = 2; k <= std::min(n, kMostSegments); ++k) {
    int64_t cuts = 0, largest = 0;
    int32_t start = 0;
    for (int32_t i = 1; i <= k; ++i) {
      // The segment ends where the kept bytes reach i / k of the stage's.
      const int64_t target = prefix[n] / k * i + (i == k ? prefix[n] % k : 0);
      int32_t end = i == k ? n
                           : static_cast<int32_t>(std::lower_bound(prefix.begin() + start + 1, prefix.end(), target) -
                                                  prefix.begin());
      end = std::min(std::max(end, start + 1), n);
      largest = std::max(largest, prefix[end] - prefix[start]);
      if (end < n) cuts += line.cut[end];
      start = end;
      if (start == n) break;
    }
    const int64_t cost = (line.inputs + cuts) * in_flight + largest;
    if (cost < best_cost) {
      best_cost = cost;
      best = StageCheckpoints{line.inputs + cuts, largest, k};
    }
  }
  return best;
}

}  // namespace

std::vector<StageCheckpoints> PlanCheckpoints(const Graph& g, const ParallelPlan& plan,
                                              const std::vector<int32_t>& in_flight) {
  const std::vector<StageLine> lines = Lines(g, plan);
  std::vector<StageCheckpoints> out(lines.size());
  for (size_t s = 0; s < lines.size(); ++s) out[s] = Split(lines[s], in_flight[s]);
  return out;
}

}  // namespace placement::plan_internal

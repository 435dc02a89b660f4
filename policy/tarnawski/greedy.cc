#include "policy/tarnawski/greedy.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/units.h"
#include "policy/exact/unit_graph.h"

namespace placement::tarnawski {
namespace {

// The inseparable blocks: units fused by the strongly connected components of the unit graph.
struct Blocks {
  std::vector<int32_t> of_unit;
  std::vector<std::vector<OpId>> ops;       // per block, ascending OpId
  std::vector<std::vector<int32_t>> units;  // per block
};

Blocks FuseCycles(const Instance& in) {
  const Graph& g = in.graph();
  pipeline_internal::UnitGraph ug;
  ug.n = in.num_units();
  ug.succs.resize(ug.n);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int32_t from = in.units.unit_of[g.edge(e).src], to = in.units.unit_of[g.edge(e).dst];
    if (from != to) ug.succs[from].push_back(to);
  }
  for (std::vector<int32_t>& s : ug.succs) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  int32_t count = 0;
  Blocks b;
  b.of_unit = pipeline_internal::StronglyConnectedComponents(ug, &count);
  b.ops.resize(count);
  b.units.resize(count);
  for (OpId v = 0; v < g.num_ops(); ++v) b.ops[b.of_unit[in.units.unit_of[v]]].push_back(v);
  for (int32_t u = 0; u < in.num_units(); ++u) b.units[b.of_unit[u]].push_back(u);
  return b;
}

// Step 2: the depth-first topological order of the blocks (or, for other starts, Kahn's order taking the block
// that comes first in the graph's topological order).
std::vector<int32_t> TopologicalOrder(const Instance& in, const Blocks& b, BlockOrder kind) {
  const Graph& g = in.graph();
  const int32_t n = static_cast<int32_t>(b.ops.size());
  auto block_of = [&](OpId v) { return b.of_unit[in.units.unit_of[v]]; };
  std::vector<int32_t> indegree(n, 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    if (block_of(g.edge(e).src) != block_of(g.edge(e).dst)) ++indegree[block_of(g.edge(e).dst)];
  }
  std::vector<int32_t> sources;
  for (int32_t x = 0; x < n; ++x) {
    if (indegree[x] == 0) sources.push_back(x);
  }
  std::sort(sources.begin(), sources.end(), [&](int32_t x, int32_t y) { return b.ops[x].front() < b.ops[y].front(); });
  std::vector<int32_t> rank(n, std::numeric_limits<int32_t>::max());
  for (OpId v = 0; v < g.num_ops(); ++v) rank[block_of(v)] = std::min(rank[block_of(v)], g.topo_rank(v));
  auto later = [&](int32_t x, int32_t y) { return rank[x] > rank[y]; };  // a min-heap on the rank
  const bool depth_first = kind == BlockOrder::kDepthFirst;
  std::vector<int32_t> stack = std::move(sources), order;
  if (!depth_first) std::make_heap(stack.begin(), stack.end(), later);
  while (!stack.empty()) {
    if (!depth_first) std::pop_heap(stack.begin(), stack.end(), later);
    const int32_t x = stack.back();
    stack.pop_back();
    order.push_back(x);
    for (OpId v : b.ops[x]) {
      for (const Edge& e : g.out_edges(v)) {
        const int32_t to = block_of(e.dst);
        if (to != x && --indegree[to] == 0) {
          stack.push_back(to);
          if (!depth_first) std::push_heap(stack.begin(), stack.end(), later);
        }
      }
    }
  }
  return order;
}

int64_t BlockBytes(const Instance& in, const Blocks& b, int32_t x) {
  int64_t bytes = 0;
  for (int32_t u : b.units[x]) bytes += in.bytes[u];
  return bytes;
}

// Whether block x may join accelerator a, which already holds `used` bytes.
bool Joins(const Instance& in, const Blocks& b, int32_t x, DeviceId a, int64_t used) {
  for (int32_t u : b.units[x]) {
    if (!in.units.allowed(u, a)) return false;
  }
  return used + BlockBytes(in, b, x) <= in.units.capacity[a];
}

// Every unit of block x to its CPU; FAILED_PRECONDITION when one may not run there, saying what each
// accelerator holds.
absl::Status ToCpu(const Instance& in, const Blocks& b, int32_t x, std::vector<DeviceId>& device) {
  for (int32_t u : b.units[x]) {
    if (in.cpu_of[u] != kNone) {
      device[u] = in.cpu_of[u];
      continue;
    }
    std::vector<int64_t> used(in.units.num_devices, 0);
    for (int32_t w = 0; w < in.num_units(); ++w) {
      if (device[w] != kNone) used[device[w]] += in.bytes[w];
    }
    std::string room;
    for (DeviceId a : in.accelerators) {
      absl::StrAppend(&room, room.empty() ? "" : ", ", in.DescribeAccelerator(a), " holds ",
                      FormatBytes(static_cast<double>(used[a])));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "tarnawski_greedy: ", in.units.Describe(in.graph(), u), " (no CPU may run it) is in a block of ",
        FormatBytes(static_cast<double>(BlockBytes(in, b, x))), " that no accelerator has room for: ", room));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::vector<int32_t>> OrderedBlocks(const Instance& in, BlockOrder kind) {
  const Blocks b = FuseCycles(in);
  std::vector<std::vector<int32_t>> out;
  for (int32_t x : TopologicalOrder(in, b, kind)) out.push_back(b.units[x]);
  return out;
}

absl::StatusOr<std::vector<DeviceId>> GreedySplit(const Instance& in) {
  const Blocks b = FuseCycles(in);
  const std::vector<int32_t> order = TopologicalOrder(in, b, BlockOrder::kDepthFirst);
  std::vector<DeviceId> device(in.num_units(), kNone);
  size_t next = 0, opened = 0;
  while (next < order.size()) {
    const DeviceId a = opened < in.accelerators.size() ? in.accelerators[opened] : kNone;
    if (a == kNone || !Joins(in, b, order[next], a, 0)) {
      if (absl::Status s = ToCpu(in, b, order[next], device); !s.ok()) return s;
      ++next;
      continue;
    }
    ++opened;
    int64_t used = 0;
    while (next < order.size() && Joins(in, b, order[next], a, used)) {
      used += BlockBytes(in, b, order[next]);
      for (int32_t u : b.units[order[next]]) device[u] = a;
      ++next;
    }
  }
  return device;
}

}  // namespace placement::tarnawski

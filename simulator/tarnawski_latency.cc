#include "simulator/tarnawski_latency.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMaxCycleEdgesNamed = 6;

// Where an accelerator's tensors go to and come from when their transfer time is not measured: a CPU of its
// host, else any CPU, else another device (kNone on a one-device cluster, where nothing moves).
DeviceId HostOf(const Topology& topo, DeviceId a) {
  DeviceId any_cpu = kNone;
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    if (topo.device(d).type != DeviceType::kCpu) continue;
    if (topo.device(d).host == topo.device(a).host) return d;
    if (any_cpu == kNone) any_cpu = d;
  }
  if (any_cpu != kNone) return any_cpu;
  return topo.num_devices() > 1 ? (a == 0 ? 1 : 0) : kNone;
}

}  // namespace

TarnawskiLatency::TarnawskiLatency(const CostModel& costs) : costs_(costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_devices = topo.num_devices();
  accelerator_.resize(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) accelerator_[d] = topo.device(d).type != DeviceType::kCpu;
  bool all_measured = true;
  for (TensorId t = 0; t < g.num_tensors(); ++t) all_measured = all_measured && g.tensor(t).transfer_seconds >= 0;
  cost_stride_ = all_measured ? 1 : num_devices;
  cost_.assign(static_cast<size_t>(g.num_tensors()) * cost_stride_, 0.0);
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    for (DeviceId a = 0; a < cost_stride_; ++a) {
      const DeviceId host = all_measured ? kNone : HostOf(topo, a);
      double& c = cost_[static_cast<size_t>(t) * cost_stride_ + a];
      if (g.tensor(t).transfer_seconds >= 0) {
        c = g.tensor(t).transfer_seconds;
      } else if (host != kNone) {
        c = costs.transfer_time(t, a, host);
      }
    }
  }
  pieces_.assign(num_devices, 0);
  piece_base_.assign(num_devices, 0);
  dp_.assign(g.num_ops(), 0);
  block_of_.assign(g.num_ops(), 0);
  members_.assign(g.num_ops(), 0);
  stamp_.assign(g.num_tensors(), 0);  // marks start at call 1
}

void TarnawskiLatency::NumberPieces(absl::Span<const DeviceId> device) {
  const Graph& g = costs_.graph();
  std::fill(pieces_.begin(), pieces_.end(), 0);
  for (DeviceId d : device) pieces_[d] = accelerator_[d];
  // Per used accelerator a: dp(v) = the most pieces a path into v crosses; inside a's set it starts at 1 and
  // grows by one each time a path comes back in (their scorer's rework of a split into contiguous pieces).
  for (DeviceId a = 0; a < static_cast<DeviceId>(pieces_.size()); ++a) {
    if (pieces_[a] == 0) continue;
    int32_t most = 0;
    for (OpId v : g.topo_order()) {
      const bool on = device[v] == a;
      int32_t d = on ? 1 : 0;
      for (EdgeId e : g.in_edges(v)) {
        const OpId u = g.edge(e).src;
        d = std::max(d, dp_[u] + (on && device[u] != a ? 1 : 0));
      }
      dp_[v] = d;
      if (on) {
        block_of_[v] = d - 1;  // the piece, numbered into a block below
        most = std::max(most, d);
      }
    }
    pieces_[a] = most;
  }
}

bool TarnawskiLatency::Contract(absl::Span<const DeviceId> device) {
  const Graph& g = costs_.graph();
  NumberPieces(device);
  int32_t num_blocks = 0;
  for (DeviceId a = 0; a < static_cast<DeviceId>(pieces_.size()); ++a) {
    piece_base_[a] = num_blocks;
    num_blocks += pieces_[a];
  }
  for (OpId v = 0; v < g.num_ops(); ++v)
    block_of_[v] = accelerator_[device[v]] ? piece_base_[device[v]] + block_of_[v] : num_blocks++;
  block_device_.resize(num_blocks);
  member_begin_.assign(num_blocks + 1, 0);
  for (OpId v = 0; v < g.num_ops(); ++v) ++member_begin_[block_of_[v] + 1];
  for (int32_t b = 0; b < num_blocks; ++b) member_begin_[b + 1] += member_begin_[b];
  indegree_.assign(num_blocks, 0);  // a cursor per block while filling, then the in-degree
  for (OpId v : g.topo_order()) {
    const int32_t b = block_of_[v];
    members_[member_begin_[b] + indegree_[b]++] = v;
    block_device_[b] = device[v];
  }
  std::fill(indegree_.begin(), indegree_.end(), 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int32_t from = block_of_[g.edge(e).src], to = block_of_[g.edge(e).dst];
    if (from != to) ++indegree_[to];
  }
  // Kahn's order over the blocks; order_ doubles as the queue.
  order_.clear();
  for (int32_t b = 0; b < num_blocks; ++b) {
    if (indegree_[b] == 0) order_.push_back(b);
  }
  for (size_t head = 0; head < order_.size(); ++head) {
    const int32_t b = order_[head];
    for (int32_t i = member_begin_[b]; i < member_begin_[b + 1]; ++i) {
      for (const Edge& e : g.out_edges(members_[i])) {
        const int32_t to = block_of_[e.dst];
        if (to != b && --indegree_[to] == 0) order_.push_back(to);
      }
    }
  }
  return static_cast<int32_t>(order_.size()) == num_blocks;
}

LatencyBlock TarnawskiLatency::FinishBlock(absl::Span<const DeviceId> device, int32_t b) {
  const Graph& g = costs_.graph();
  const DeviceId a = block_device_[b];
  const uint64_t mark = (epoch_ << 32) | static_cast<uint32_t>(b);
  LatencyBlock block{a, b - piece_base_[a] + 1, member_begin_[b + 1] - member_begin_[b], 0, 0, 0, 0};
  for (int32_t i = member_begin_[b]; i < member_begin_[b + 1]; ++i) {
    const OpId v = members_[i];
    block.compute += costs_.op_time(v, device[v]);
    for (EdgeId e : g.in_edges(v)) {
      const int32_t from = block_of_[g.edge(e).src];
      if (from == b) continue;
      block.ready = std::max(block.ready, finish_[from]);
      const TensorId t = g.edge_tensor(e);
      if (stamp_[t] != mark) {  // each tensor entering the block once
        stamp_[t] = mark;
        block.transfer += BoundaryCost(t, a);
      }
    }
    for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) {
      const TensorId t = g.edge_tensor(e);
      if (block_of_[g.edge(e).dst] == b || stamp_[t] == mark) continue;
      stamp_[t] = mark;  // each tensor leaving the block once, however many outside operators read it
      block.transfer += BoundaryCost(t, a);
    }
  }
  block.finish = block.ready + block.transfer + block.compute;
  return block;
}

double TarnawskiLatency::Finish(absl::Span<const DeviceId> device, std::vector<LatencyBlock>* blocks) {
  const Graph& g = costs_.graph();
  ++epoch_;
  finish_.assign(block_device_.size(), 0.0);
  double latency = 0;
  finish_sum_ = 0;
  for (int32_t b : order_) {
    if (accelerator_[block_device_[b]]) {
      const LatencyBlock block = FinishBlock(device, b);
      finish_[b] = block.finish;
      if (blocks != nullptr) blocks->push_back(block);
    } else {
      const OpId v = members_[member_begin_[b]];
      double ready = 0;
      for (EdgeId e : g.in_edges(v)) ready = std::max(ready, finish_[block_of_[g.edge(e).src]]);
      finish_[b] = ready + costs_.op_time(v, device[v]);
    }
    latency = std::max(latency, finish_[b]);
    finish_sum_ += finish_[b];
  }
  return latency;
}

double TarnawskiLatency::Latency(absl::Span<const DeviceId> device) {
  if (!Contract(device)) return kInf;
  return Finish(device, nullptr);
}

absl::StatusOr<double> TarnawskiLatency::Score(absl::Span<const DeviceId> device, std::vector<LatencyBlock>* blocks) {
  if (!Contract(device)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the split is one Tarnawski et al.'s latency model forbids: ", DescribeCycle(device)));
  }
  const size_t first = blocks != nullptr ? blocks->size() : 0;
  const double latency = Finish(device, blocks);
  if (blocks != nullptr) {
    std::stable_sort(blocks->begin() + static_cast<std::ptrdiff_t>(first), blocks->end(),
                     [](const LatencyBlock& x, const LatencyBlock& y) {
                       return x.ready != y.ready     ? x.ready < y.ready
                              : x.device != y.device ? x.device < y.device
                                                     : x.piece < y.piece;
                     });
  }
  return latency;
}

// One cycle of blocks, as the edges that go round it in order. Walks back from a block Kahn's order never
// reached, through predecessors it never reached either (every such block has one), until a block repeats.
std::vector<EdgeId> TarnawskiLatency::CycleEdges() const {
  const Graph& g = costs_.graph();
  const int32_t num_blocks = static_cast<int32_t>(block_device_.size());
  int32_t b = 0;
  while (b < num_blocks && indegree_[b] == 0) ++b;
  std::vector<int32_t> seen_at(num_blocks, -1);
  std::vector<EdgeId> via;  // via[i]: an edge into the i-th block visited, from the next one
  while (seen_at[b] < 0) {
    seen_at[b] = static_cast<int32_t>(via.size());
    EdgeId into = kNone;
    for (int32_t i = member_begin_[b]; i < member_begin_[b + 1] && into == kNone; ++i) {
      for (EdgeId e : g.in_edges(members_[i])) {
        const int32_t from = block_of_[g.edge(e).src];
        if (from != b && indegree_[from] > 0) {
          into = e;
          break;
        }
      }
    }
    via.push_back(into);
    b = block_of_[g.edge(into).src];
  }
  return std::vector<EdgeId>(via.rbegin(), via.rend() - seen_at[b]);
}

std::string TarnawskiLatency::DescribeCycle(absl::Span<const DeviceId> device) const {
  const Graph& g = costs_.graph();
  const Topology& topo = costs_.topology();
  std::vector<std::string> accelerators, edges;
  for (EdgeId id : CycleEdges()) {
    const Edge& e = g.edge(id);
    const std::string name = absl::StrCat("'", topo.device(device[e.dst]).name, "'");
    if (accelerator_[device[e.dst]] &&
        std::find(accelerators.begin(), accelerators.end(), name) == accelerators.end()) {
      accelerators.push_back(name);
    }
    if (edges.size() == kMaxCycleEdgesNamed) continue;
    edges.push_back(absl::StrCat("'", g.name(e.src), "' on ", topo.device(device[e.src]).name, " feeds '",
                                 g.name(e.dst), "' on ", topo.device(device[e.dst]).name));
  }
  return absl::StrCat("the blocks of accelerator", accelerators.size() > 1 ? "s " : " ",
                      absl::StrJoin(accelerators, " and "), " feed each other in a circle (",
                      absl::StrJoin(edges, ", "),
                      "), so the graph contracted by the accelerators' blocks has a cycle; an accelerator's operators "
                      "must form contiguous blocks that some order can run one after another");
}

}  // namespace placement

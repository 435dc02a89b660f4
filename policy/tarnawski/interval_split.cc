#include "policy/tarnawski/interval_split.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

namespace placement::tarnawski {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The tensors that cross between blocks, indexed by block position.
struct Crossings {
  std::vector<int32_t> producer;                 // per tensor: its block
  std::vector<std::vector<TensorId>> produced;   // per block: its tensors read by a later block
  std::vector<std::vector<TensorId>> read;       // per block: the tensors of earlier blocks it reads, once each
  std::vector<std::vector<TensorId>> last_read;  // per block: the tensors whose last reading block it is
};

Crossings Index(const Instance& in, const std::vector<std::vector<int32_t>>& blocks) {
  const Graph& g = in.graph();
  std::vector<int32_t> position(in.num_units(), 0);
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int32_t u : blocks[b]) position[u] = static_cast<int32_t>(b);
  }
  Crossings c;
  c.producer.assign(g.num_tensors(), -1);
  c.produced.resize(blocks.size());
  c.read.resize(blocks.size());
  c.last_read.resize(blocks.size());
  for (OpId v = 0; v < g.num_ops(); ++v) {
    const int32_t b = position[in.units.unit_of[v]];
    for (TensorId t = g.first_output(v); t < g.first_output(v + 1); ++t) {
      c.producer[t] = b;
      int32_t last = b;
      std::vector<int32_t> readers;
      for (const Edge& e : g.out_edges(v)) {
        const int32_t r = position[in.units.unit_of[e.dst]];
        if (g.first_output(v) + e.src_output == t && r != b) readers.push_back(r);
      }
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      for (int32_t r : readers) c.read[r].push_back(t);
      if (!readers.empty()) last = readers.back();
      if (last == b) continue;
      c.produced[b].push_back(t);
      c.last_read[last].push_back(t);
    }
  }
  return c;
}

class IntervalProgram {
 public:
  IntervalProgram(const Instance& in, const std::vector<std::vector<int32_t>>& blocks, const TarnawskiLatency& model)
      : in_(in), blocks_(blocks), model_(model), crossings_(Index(in, blocks)), stamp_(in.graph().num_tensors(), -1) {}

  std::vector<DeviceId> Solve();

 private:
  struct Step {
    int32_t from = -1;  // previous position
    bool cpu = false;
  };
  // Calls back with (end, cost) for every run that starts at block i on accelerator a and fits it.
  void Runs(int32_t i, DeviceId a, const std::function<void(int32_t, double)>& visit);
  double CpuTime(int32_t b) const;
  std::vector<DeviceId> Backtrack(const std::vector<Step>& step, int32_t m) const;
  size_t At(int32_t j, int32_t m) const { return static_cast<size_t>(j) * (in_.accelerators.size() + 1) + m; }

  const Instance& in_;
  const std::vector<std::vector<int32_t>>& blocks_;
  const TarnawskiLatency& model_;
  const Crossings crossings_;
  std::vector<int32_t> stamp_;  // per tensor: the Runs call that counted it coming in
  int32_t call_ = 0;
};

void IntervalProgram::Runs(int32_t i, DeviceId a, const std::function<void(int32_t, double)>& visit) {
  ++call_;
  int64_t bytes = 0;
  double compute = 0, in = 0, out = 0;
  for (int32_t j = i; j < static_cast<int32_t>(blocks_.size()); ++j) {
    for (int32_t u : blocks_[j]) {
      if (!in_.units.allowed(u, a)) return;
      bytes += in_.bytes[u];
      compute += in_.units.time_on(u, a);
    }
    if (bytes > in_.units.capacity[a]) return;
    for (TensorId t : crossings_.read[j]) {
      if (crossings_.producer[t] < i && stamp_[t] != call_) {
        stamp_[t] = call_;
        in += model_.BoundaryCost(t, a);
      }
    }
    for (TensorId t : crossings_.produced[j]) out += model_.BoundaryCost(t, a);
    for (TensorId t : crossings_.last_read[j]) {
      if (crossings_.producer[t] >= i) out -= model_.BoundaryCost(t, a);  // now read only inside the run
    }
    visit(j + 1, compute + in + out);
  }
}

double IntervalProgram::CpuTime(int32_t b) const {
  double t = 0;
  for (int32_t u : blocks_[b]) {
    if (in_.cpu_of[u] == kNone) return kInf;
    t += in_.units.time_on(u, in_.cpu_of[u]);
  }
  return t;
}

std::vector<DeviceId> IntervalProgram::Solve() {
  const int32_t n = static_cast<int32_t>(blocks_.size()), k = static_cast<int32_t>(in_.accelerators.size());
  std::vector<double> best(static_cast<size_t>(n + 1) * (k + 1), kInf);
  std::vector<Step> step(best.size());
  best[At(0, 0)] = 0;
  for (int32_t j = 0; j < n; ++j) {
    for (int32_t m = 0; m <= k; ++m) {
      const double here = best[At(j, m)];
      if (here == kInf) continue;
      if (const double cpu = here + CpuTime(j); cpu < best[At(j + 1, m)]) {
        best[At(j + 1, m)] = cpu;
        step[At(j + 1, m)] = Step{j, true};
      }
      if (m == k) continue;
      Runs(j, in_.accelerators[m], [&](int32_t end, double cost) {
        if (here + cost < best[At(end, m + 1)]) {
          best[At(end, m + 1)] = here + cost;
          step[At(end, m + 1)] = Step{j, false};
        }
      });
    }
  }
  int32_t m_best = -1;
  for (int32_t m = 0; m <= k; ++m) {
    if (best[At(n, m)] < kInf && (m_best < 0 || best[At(n, m)] < best[At(n, m_best)])) m_best = m;
  }
  return m_best < 0 ? std::vector<DeviceId>{} : Backtrack(step, m_best);
}

std::vector<DeviceId> IntervalProgram::Backtrack(const std::vector<Step>& step, int32_t m) const {
  std::vector<DeviceId> split(in_.num_units(), kNone);
  for (int32_t j = static_cast<int32_t>(blocks_.size()); j > 0;) {
    const Step s = step[At(j, m)];
    if (!s.cpu) --m;
    for (int32_t b = s.from; b < j; ++b) {
      for (int32_t u : blocks_[b]) split[u] = s.cpu ? in_.cpu_of[u] : in_.accelerators[m];
    }
    j = s.from;
  }
  return split;
}

}  // namespace

std::vector<DeviceId> IntervalSplit(const Instance& instance, const std::vector<std::vector<int32_t>>& blocks,
                                    const TarnawskiLatency& model) {
  if (static_cast<int32_t>(blocks.size()) > kMaxIntervalBlocks) return {};
  IntervalProgram program(instance, blocks, model);
  return program.Solve();
}

}  // namespace placement::tarnawski

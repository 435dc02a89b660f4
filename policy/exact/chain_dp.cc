#include "policy/exact/chain_dp.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace placement {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// c * x with 0 * inf = 0 (an unused device absorbs nothing).
double Times(int32_t c, double x) { return c == 0 ? 0.0 : c * x; }

struct Layer {
  int64_t lo = 0, hi = 0;  // window [lo, hi) of the work-sorted ideals
  std::vector<double> value;
  std::vector<int32_t> back;     // previous ideal
  std::vector<uint8_t> kind;     // 0: unreached, 1: accelerator step, 2: CPU step
  std::vector<int32_t> reached;  // ideals with kind != 0, ascending (so by work)
  bool Contains(int64_t i) const { return i >= lo && i < hi; }
};

class ChainDp {
 public:
  ChainDp(const PipelineModel& model, const IdealSet& ideals, const ChainDpOptions& options, const Budget& budget)
      : m_(model), s_(ideals), o_(options), budget_(budget), k_(model.num_accelerators()), c_(model.num_cpus()) {
    const double total = s_.work(s_.full());
    slack_ = 1e-9 * std::max(1.0, total);
    bound_ = o_.bound * (1 + 1e-12);
    finite_ = std::isfinite(o_.bound) && o_.cost == SegmentCost::kLoad;
    absorb_ = finite_ && c_ > 0 ? CpuAbsorption(m_, o_.bound) : kInf;
  }

  ChainDpResult Run() {
    layers_.resize(static_cast<size_t>(k_ + 1) * (c_ + 1));
    int64_t cells = 0;
    for (int32_t a = 0; a <= k_; ++a) {
      for (int32_t c = 0; c <= c_; ++c) cells += Window(a, c);
    }
    result_.window_ideals = cells;
    if (o_.max_cells > 0 && cells > o_.max_cells) {
      result_.too_large = true;
      return std::move(result_);
    }
    for (int32_t total = 0; total <= k_ + c_; ++total) {
      for (int32_t a = std::max(0, total - c_); a <= std::min(k_, total); ++a) {
        if (!Fill(a, total - a)) {
          result_.expired = true;
          return std::move(result_);
        }
      }
    }
    const Layer& last = layer(k_, c_);
    const int64_t full = s_.full();
    if (!last.Contains(full) || last.kind[full - last.lo] == 0) return std::move(result_);
    result_.found = true;
    result_.value = last.value[full - last.lo];
    // Walk the back pointers; empty steps only change the layer.
    int32_t a = k_, c = c_;
    int64_t j = full;
    while (a + c > 0) {
      const Layer& l = layer(a, c);
      const uint8_t kind = l.kind[j - l.lo];
      const int64_t i = l.back[j - l.lo];
      if (i != j) result_.segments.push_back(ChainSegment{i, j, kind == 2, Cost(i, j, kind == 2)});
      (kind == 2 ? c : a) -= 1;
      j = i;
    }
    std::reverse(result_.segments.begin(), result_.segments.end());
    return std::move(result_);
  }

 private:
  Layer& layer(int32_t a, int32_t c) { return layers_[static_cast<size_t>(a) * (c_ + 1) + c]; }

  // First index whose work is at least w.
  int64_t LowerIndex(double w) const {
    int64_t lo = 0, hi = s_.size();
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (s_.work(mid) < w)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  // One past the last index whose work is at most w.
  int64_t UpperIndex(double w) const {
    int64_t lo = 0, hi = s_.size();
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (s_.work(mid) <= w)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  double Cost(int64_t i, int64_t j, bool cpu) const {
    if (o_.cost == SegmentCost::kMemory) {
      const int64_t cap = cpu ? m_.cpu_bytes : m_.accelerator_bytes;
      return cap > 0 ? static_cast<double>(s_.bytes(j) - s_.bytes(i)) / static_cast<double>(cap) : 0.0;
    }
    return StepLoad(m_, s_, i, j, cpu);
  }

  // Sets the window of layer (a, c) and returns its width.
  int64_t Window(int32_t a, int32_t c) {
    Layer& l = layer(a, c);
    if (finite_) {
      const double total = s_.work(s_.full());
      l.lo = LowerIndex(total - (k_ - a) * o_.bound - Times(c_ - c, absorb_) - slack_);
      l.hi = UpperIndex(a * o_.bound + Times(c, absorb_) + slack_);
      if (l.hi < l.lo) l.hi = l.lo;
    } else {
      l.lo = 0;
      l.hi = s_.size();
    }
    return l.hi - l.lo;
  }

  bool Fill(int32_t a, int32_t c) {
    Layer& l = layer(a, c);
    const int64_t width = l.hi - l.lo;
    l.value.assign(width, kInf);
    l.back.assign(width, -1);
    l.kind.assign(width, 0);
    if (a == 0 && c == 0) {
      if (l.Contains(s_.empty())) {
        l.value[s_.empty() - l.lo] = 0;
        l.back[s_.empty() - l.lo] = static_cast<int32_t>(s_.empty());
        l.kind[s_.empty() - l.lo] = 1;
        l.reached.push_back(static_cast<int32_t>(s_.empty()));
      }
      return true;
    }
    for (int64_t j = l.lo; j < l.hi; ++j) {
      if (scanned_since_check_ > (1 << 18) || ((j - l.lo) & 255) == 0) {
        scanned_since_check_ = 0;
        if (budget_.Expired()) return false;
      }
      if (finite_ && !Admissible(a, c, j)) continue;
      double best = kInf;
      int64_t arg = -1;
      uint8_t kind = 0;
      if (a > 0) Relax(layer(a - 1, c), j, /*cpu=*/false, best, arg, kind);
      if (c > 0) Relax(layer(a, c - 1), j, /*cpu=*/true, best, arg, kind);
      if (expired_) return false;
      if (best <= bound_) {
        l.value[j - l.lo] = best;
        l.back[j - l.lo] = static_cast<int32_t>(arg);
        l.kind[j - l.lo] = kind;
        l.reached.push_back(static_cast<int32_t>(j));
      }
    }
    return true;
  }

  // Accelerators pay every hyperedge crossing the ideal J on their side of it (each meets a step there, and
  // that step does not hold the whole hyperedge): without CPUs before J, a accelerators hold work(J) +
  // crossW(J); without CPUs after it, the remaining ones hold work(V \ J) + crossW(J).
  bool Admissible(int32_t a, int32_t c, int64_t j) const {
    const double crossing = s_.cross_weight(j);
    if (c == 0 && s_.work(j) + crossing > a * o_.bound + slack_) return false;
    const double rest = s_.work(s_.full()) - s_.work(j);
    return !(c == c_ && rest + crossing > (k_ - a) * o_.bound + slack_);
  }

  // Best way to reach J from the previous layer p with one more step of the given device type.
  void Relax(const Layer& p, int64_t j, bool cpu, double& best, int64_t& arg, uint8_t& kind) {
    const uint8_t step = cpu ? 2 : 1;
    if (p.Contains(j) && p.kind[j - p.lo] != 0 && p.value[j - p.lo] < best) {
      best = p.value[j - p.lo];
      arg = j;
      kind = step;
    }
    const bool memory = o_.cost == SegmentCost::kMemory;
    // Only reached ideals at most one step's work below J can precede it.
    const double top = s_.work(j) + slack_;
    const double bottom = finite_ ? s_.work(j) - (cpu ? absorb_ : o_.bound) - slack_ : -kInf;
    auto first = std::lower_bound(p.reached.begin(), p.reached.end(), bottom,
                                  [&](int32_t i, double w) { return s_.work(i) < w; });
    auto last = std::upper_bound(first, p.reached.end(), top, [&](double w, int32_t i) { return w < s_.work(i); });
    const int64_t cap = cpu ? m_.cpu_bytes : m_.accelerator_bytes;
    scanned_since_check_ += last - first;
    for (auto it = first; it != last; ++it) {
      const int64_t i = *it;
      const double vi = p.value[i - p.lo];
      if (!(vi < best) || i == j) continue;
      if (cpu ? s_.cpu_bad(j) != s_.cpu_bad(i) : s_.acc_bad(j) != s_.acc_bad(i)) continue;
      const int64_t bytes = s_.bytes(j) - s_.bytes(i);
      double floor;  // a lower bound on the step's cost, exact for CPU loads and memory
      if (memory) {
        floor = cap > 0 ? static_cast<double>(bytes) / static_cast<double>(cap) : 0.0;
      } else {
        floor =
            cpu ? s_.cpu(j) - s_.cpu(i) : s_.work(j) - s_.work(i) + std::abs(s_.cross_weight(j) - s_.cross_weight(i));
      }
      if (floor > bound_ || std::max(vi, floor) >= best) continue;
      if (!s_.Subset(i, j)) continue;
      // Step costs can be dear on wide graphs (long crossing lists: a 30k-operator layered DAG spent seconds
      // in 256 of them), so the budget is checked before each; a clock read is cheap beside Comm.
      ++result_.pairs;
      if (budget_.Expired()) {
        expired_ = true;
        return;
      }
      if (!memory && o_.enforce_memory && cap > 0 && bytes > cap) {
        result_.memory_pruned = true;
        continue;
      }
      const double cost = memory || cpu ? floor : s_.work(j) - s_.work(i) + s_.Comm(i, j);
      if (cost > bound_) continue;
      const double candidate = std::max(vi, cost);
      if (candidate < best) {
        best = candidate;
        arg = i;
        kind = step;
      }
    }
  }

  const PipelineModel& m_;
  const IdealSet& s_;
  const ChainDpOptions& o_;
  const Budget& budget_;
  const int32_t k_, c_;
  double slack_ = 0, bound_ = kInf, absorb_ = kInf;
  bool finite_ = false;
  bool expired_ = false;
  int64_t scanned_since_check_ = 0;
  std::vector<Layer> layers_;
  ChainDpResult result_;
};

}  // namespace

double CpuAbsorption(const PipelineModel& model, double bound) {
  // Fractional knapsack: take units by accelerator work per CPU second, best first, until T CPU seconds.
  std::vector<std::pair<double, double>> items;  // (cpu time, work)
  double free_work = 0;
  for (int32_t u = 0; u < model.num_units; ++u) {
    if (!model.cpu_ok[u] || !model.acc_ok[u] || model.acc_time[u] <= 0) continue;
    if (model.cpu_time[u] <= 0) {
      free_work += model.acc_time[u];
    } else {
      items.emplace_back(model.cpu_time[u], model.acc_time[u]);
    }
  }
  std::sort(items.begin(), items.end(),
            [](const auto& x, const auto& y) { return x.second * y.first > y.second * x.first; });
  double left = bound, work = free_work;
  for (const auto& [cpu, w] : items) {
    if (cpu <= left) {
      left -= cpu;
      work += w;
    } else {
      work += w * (left / cpu);
      break;
    }
  }
  return work * (1 + 1e-9);
}

double StepLoad(const PipelineModel& model, const IdealSet& ideals, int64_t from, int64_t to, bool cpu) {
  if (cpu) return ideals.cpu(to) - ideals.cpu(from);
  return ideals.work(to) - ideals.work(from) + ideals.Comm(from, to);
}

ChainDpResult RunChainDp(const PipelineModel& model, const IdealSet& ideals, const ChainDpOptions& options,
                         const Budget& budget) {
  return ChainDp(model, ideals, options, budget).Run();
}

}  // namespace placement

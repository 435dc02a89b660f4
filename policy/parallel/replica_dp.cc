#include "policy/parallel/replica_dp.h"

#include <algorithm>
#include <cmath>

namespace placement::parallel {

ReplicaDp::ReplicaDp(const IdealSet& ideals, const ReplicaDpOptions& options, StageCostFn cost, const Budget& budget)
    : s_(ideals), o_(options), cost_(cost), budget_(budget) {
  slack_ = 1e-9 * std::max(1.0, s_.work(o_.end) - s_.work(o_.start));
  bound_ = o_.bound * (1 + 1e-12);
}

bool ReplicaDp::Inside(int64_t i) const { return s_.Subset(o_.start, i) && s_.Subset(i, o_.end); }

// Only ideals whose work leaves every device of the chain under the bound: before the cell m devices hold its work
// from the fixed end, after it the other D - m hold the rest.
void ReplicaDp::Window(int32_t m) {
  Layer& l = layers_[m];
  l.lo = 0;
  l.hi = s_.size();
  if (!std::isfinite(o_.bound)) return;
  const double from = s_.work(o_.start), to = s_.work(o_.end), t = o_.bound * o_.work_per_bound;
  const double done = m * t + slack_, left = (o_.devices - m) * t + slack_;
  const double low = o_.backward ? to - done : o_.whole_chain ? to - left : -kNoPlan;
  const double high = o_.backward ? (o_.whole_chain ? from + left : kNoPlan) : from + done;
  const auto by_work = [&](double w) {
    int64_t lo = 0, hi = s_.size();
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (s_.work(mid) < w)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  l.lo = std::isfinite(low) ? by_work(low) : 0;
  l.hi = std::isfinite(high) ? std::max(l.lo, by_work(std::nextafter(high, kNoPlan))) : s_.size();
}

const ReplicaDp::Choice* ReplicaDp::At(int32_t m, int64_t i, bool first) const {
  const Layer& l = layers_[m];
  if (!l.Contains(i)) return nullptr;
  const Choice& c = (first ? l.first : l.rest)[i - l.lo];
  return c.value <= bound_ ? &c : nullptr;
}

bool ReplicaDp::Run() {
  layers_.assign(o_.devices + 1, Layer{});
  for (int32_t m = 0; m <= o_.devices; ++m) {
    Window(m);
    cells_ += layers_[m].hi - layers_[m].lo;
  }
  for (int32_t m = 0; m <= o_.devices; ++m) {
    if (!Fill(m)) return false;
  }
  return true;
}

bool ReplicaDp::Fill(int32_t m) {
  Layer& l = layers_[m];
  const int64_t width = l.hi - l.lo;
  l.rest.assign(width, Choice{});
  if (o_.backward) l.first.assign(width, Choice{});
  const int64_t anchor = o_.backward ? o_.end : o_.start;
  for (int64_t j = l.lo; j < l.hi; ++j) {
    if (since_check_ > (1 << 16) || ((j - l.lo) & 255) == 0) {
      since_check_ = 0;
      if (budget_.Expired()) return false;
    }
    Choice& rest = l.rest[j - l.lo];
    Choice unused;
    Choice& first = o_.backward ? l.first[j - l.lo] : unused;
    if (j == anchor) {
      rest = first = Choice{0, static_cast<int32_t>(j), 0};
    } else if (m > 0 && Inside(j)) {
      // An idle device changes nothing but the layer.
      if (const Choice* c = At(m - 1, j, false)) rest = Choice{c->value, static_cast<int32_t>(j), 0};
      if (o_.backward) {
        if (const Choice* c = At(m - 1, j, true)) first = Choice{c->value, static_cast<int32_t>(j), 0};
      }
      Relax(m, j, rest, first);
    }
    if (rest.value <= bound_) l.reached.push_back(static_cast<int32_t>(j));
  }
  return true;
}

// The cell's last stage (forward: from an ideal of an earlier layer to j; backward: from j to one) on r devices.
void ReplicaDp::Relax(int32_t m, int64_t j, Choice& rest, Choice& first) {
  const double wj = s_.work(j);
  for (int32_t r = 1; r <= std::min(m, o_.max_replicas); ++r) {
    const Layer& p = layers_[m - r];
    const double reach = std::isfinite(o_.bound) ? r * o_.bound * o_.work_per_bound + slack_ : kNoPlan;
    const double low = o_.backward ? wj : wj - reach, high = o_.backward ? wj + reach : wj;
    auto it = std::lower_bound(p.reached.begin(), p.reached.end(), low - slack_,
                               [&](int32_t i, double w) { return s_.work(i) < w; });
    const int32_t offset = o_.backward ? o_.devices - m : m - r;
    for (; it != p.reached.end() && s_.work(*it) <= high + slack_; ++it) {
      const int64_t i = *it;
      if (i == j) continue;
      const double vi = p.rest[i - p.lo].value;
      if (!(vi < rest.value) && !(o_.backward && vi < first.value)) continue;
      if (o_.backward ? !s_.Subset(j, i) : !s_.Subset(i, j)) continue;
      ++pairs_;
      ++since_check_;
      const int64_t from = o_.backward ? j : i, to = o_.backward ? i : j;
      const double cost = cost_(from, to, offset, r, o_.backward ? false : i == o_.start);
      if (cost <= bound_ && std::max(vi, cost) < rest.value)
        rest = Choice{std::max(vi, cost), static_cast<int32_t>(i), r};
      if (!o_.backward) continue;
      const double as_first = cost_(from, to, offset, r, true);
      if (as_first <= bound_ && std::max(vi, as_first) < first.value) {
        first = Choice{std::max(vi, as_first), static_cast<int32_t>(i), r};
      }
    }
  }
}

double ReplicaDp::Best(int64_t ideal) const {
  const Choice* c = At(o_.devices, ideal, o_.backward);
  return c != nullptr ? c->value : kNoPlan;
}

std::vector<ReplicaStep> ReplicaDp::Chain(int64_t ideal) const {
  std::vector<ReplicaStep> steps;
  int32_t m = o_.devices;
  int64_t j = ideal;
  bool first = o_.backward;
  const Choice* c = At(m, j, first);
  while (c != nullptr && m > 0 && j != (o_.backward ? o_.end : o_.start)) {
    if (c->replicas == 0) {
      --m;
    } else {
      const int64_t other = c->other;
      const int32_t offset = o_.backward ? o_.devices - m : m - c->replicas;
      steps.push_back(o_.backward ? ReplicaStep{j, other, offset, c->replicas}
                                  : ReplicaStep{other, j, offset, c->replicas});
      m -= c->replicas;
      j = other;
      first = false;
    }
    c = At(m, j, first);
  }
  if (!o_.backward) std::reverse(steps.begin(), steps.end());
  return steps;
}

}  // namespace placement::parallel

#include "policy/exact/greedy_split.h"

#include <algorithm>
#include <utility>

namespace placement::pipeline_internal {
namespace {

int32_t HedgeSize(const PipelineModel& m, int32_t h) { return m.hedge_begin[h + 1] - m.hedge_begin[h]; }

// Cuts the order under bound T into runs, one per accelerator; false when it needs more than k of them.
bool Cut(const PipelineModel& m, const std::vector<int32_t>& order, double bound, std::vector<int32_t>& step_of_unit,
         int32_t* steps, std::vector<int32_t>& count, std::vector<int32_t>& touched) {
  const int64_t cap = m.accelerator_bytes;
  size_t i = 0;
  int32_t step = 0;
  while (i < order.size()) {
    if (step == m.num_accelerators()) return false;
    double work = 0, comm = 0;
    int64_t bytes = 0;
    size_t end = i;
    touched.clear();
    for (size_t j = i; j < order.size(); ++j) {
      const int32_t u = order[j];
      work += m.acc_time[u];
      bytes += m.bytes[u];
      if (work > bound || (cap > 0 && bytes > cap)) break;
      for (int32_t k = m.unit_hedge_begin[u]; k < m.unit_hedge_begin[u + 1]; ++k) {
        const int32_t h = m.unit_hedges[k];
        if (count[h]++ == 0) {
          touched.push_back(h);
          comm += m.hedge_weight[h];
        }
        if (count[h] == HedgeSize(m, h)) comm -= m.hedge_weight[h];
      }
      if (work + comm <= bound) end = j + 1;  // loads are not monotone: keep the longest run within T
    }
    for (int32_t h : touched) count[h] = 0;
    if (end == i) return false;
    for (size_t j = i; j < end; ++j) step_of_unit[order[j]] = step;
    i = end;
    ++step;
  }
  *steps = step;
  return true;
}

// The split's largest step load, summed afresh so that it matches what the evaluator adds up.
double SplitValue(const PipelineModel& m, const Split& split) {
  std::vector<double> load(split.step_is_cpu.size(), 0);
  for (int32_t u = 0; u < m.num_units; ++u) load[split.step_of_unit[u]] += m.acc_time[u];
  std::vector<int32_t> seen;
  for (size_t h = 0; h + 1 < m.hedge_begin.size(); ++h) {
    seen.clear();
    for (int32_t k = m.hedge_begin[h]; k < m.hedge_begin[h + 1]; ++k)
      seen.push_back(split.step_of_unit[m.hedge_members[k]]);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    if (seen.size() < 2) continue;
    for (int32_t s : seen) load[s] += m.hedge_weight[h];
  }
  return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end());
}

}  // namespace

std::optional<Split> GreedySplit(const PipelineModel& m, const std::vector<int32_t>& order, double low, double high,
                                 const Budget& budget) {
  if (m.num_accelerators() == 0) return std::nullopt;
  for (int32_t u = 0; u < m.num_units; ++u) {
    if (!m.acc_ok[u]) return std::nullopt;
  }
  std::vector<int32_t> count(m.hedge_weight.size(), 0), touched, step_of_unit(m.num_units, 0);
  int32_t steps = 0;
  if (!Cut(m, order, high, step_of_unit, &steps, count, touched)) return std::nullopt;
  Split best;
  best.step_of_unit = step_of_unit;
  best.step_is_cpu.assign(steps, 0);
  for (int it = 0; it < 40 && high - low > 1e-9 * high; ++it) {
    if (budget.Expired()) break;
    const double mid = 0.5 * (low + high);
    if (Cut(m, order, mid, step_of_unit, &steps, count, touched)) {
      high = mid;
      best.step_of_unit = step_of_unit;
      best.step_is_cpu.assign(steps, 0);
    } else {
      low = mid;
    }
  }
  best.value = SplitValue(m, best);
  return best;
}

}  // namespace placement::pipeline_internal

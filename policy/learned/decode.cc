#include "policy/learned/decode.h"

#include <algorithm>
#include <cmath>

namespace placement::learned {

namespace {

template <typename T>
int32_t ChooseFrom(const T* logits, int32_t devices, std::mt19937_64* rng) {
  int32_t best = 0;
  for (int32_t d = 1; d < devices; ++d) {
    if (logits[d] > logits[best]) best = d;
  }
  if (rng == nullptr) return best;
  thread_local std::vector<double> p;
  p.resize(devices);
  double total = 0;
  const int32_t n = devices;
  for (int32_t d = 0; d < n; ++d) total += p[d] = std::exp(static_cast<double>(logits[d] - logits[best]));
  double r = std::uniform_real_distribution<double>(0, total)(*rng);
  for (int32_t d = 0; d < n; ++d) {
    if ((r -= p[d]) <= 0 && p[d] > 0) return d;
  }
  return best;
}

}  // namespace

int32_t Choose(const float* logits, int32_t devices, std::mt19937_64* rng) { return ChooseFrom(logits, devices, rng); }
int32_t Choose(const double* scores, int32_t devices, std::mt19937_64* rng) { return ChooseFrom(scores, devices, rng); }

std::vector<int32_t> DecodeSingleShot(const PolicyScores& s, std::mt19937_64* rng) {
  std::vector<int32_t> out(s.groups);
  for (int32_t g = 0; g < s.groups; ++g) out[g] = Choose(&s.logits[static_cast<size_t>(g) * s.devices], s.devices, rng);
  return out;
}

void DecodeSweep(const PolicyScores& s, const PolicyInput& in, std::vector<int32_t>& group_device,
                 std::mt19937_64* rng) {
  DeviceTotals totals = Totals(in, group_device);
  std::vector<float> context(static_cast<size_t>(s.devices) * kContextFeatures);
  std::vector<float> row(s.devices);
  for (int32_t g = 0; g < s.groups; ++g) {  // group ids follow the topological order (coarsen.h)
    GroupContext(in, g, group_device, totals, context.data());
    for (int32_t d = 0; d < s.devices; ++d) {
      float v = s.logits[static_cast<size_t>(g) * s.devices + d];
      for (int k = 0; k < kContextFeatures; ++k)
        v += s.context_weights[k] * context[static_cast<size_t>(d) * kContextFeatures + k];
      row[d] = v;
    }
    const int32_t to = Choose(row.data(), s.devices, rng);
    const int32_t from = group_device[g];
    if (to == from) continue;
    totals.load[from] -= in.fastest[g];
    totals.params[from] -= in.params[g];
    totals.load[to] += in.fastest[g];
    totals.params[to] += in.params[g];
    group_device[g] = to;
  }
}

double LogThreshold(double threshold) { return std::log(std::clamp(threshold, 1e-30, 1.0)); }

std::vector<uint8_t> GroupCandidates(const PolicyScores& s, double threshold) {
  // p[d] >= threshold * p[best]  <=>  logit[d] - logit[best] >= log(threshold): no softmax needed.
  const float cut = static_cast<float>(LogThreshold(threshold));
  std::vector<uint8_t> group_rows(static_cast<size_t>(s.groups) * s.devices, 0);
  for (int32_t g = 0; g < s.groups; ++g) {
    const float* row = &s.logits[static_cast<size_t>(g) * s.devices];
    const float top = *std::max_element(row, row + s.devices);
    for (int32_t d = 0; d < s.devices; ++d) group_rows[static_cast<size_t>(g) * s.devices + d] = row[d] - top >= cut;
  }
  return group_rows;
}

std::vector<uint8_t> OperatorCandidates(const std::vector<uint8_t>& group_rows, const Coarsening& groups,
                                        int32_t devices) {
  const size_t ops = groups.group_of_op.size();
  std::vector<uint8_t> out(ops * devices);
  for (size_t v = 0; v < ops; ++v) {
    const uint8_t* from = &group_rows[static_cast<size_t>(groups.group_of_op[v]) * devices];
    std::copy(from, from + devices, &out[v * devices]);
  }
  return out;
}

std::vector<uint8_t> SampleGroupCandidates(const PolicyScores& s, double threshold, std::mt19937_64& rng) {
  const double log_threshold = LogThreshold(threshold);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<uint8_t> rows(static_cast<size_t>(s.groups) * s.devices, 0);
  for (int32_t g = 0; g < s.groups; ++g) {
    const float* row = &s.logits[static_cast<size_t>(g) * s.devices];
    const int32_t best = static_cast<int32_t>(std::max_element(row, row + s.devices) - row);
    for (int32_t d = 0; d < s.devices; ++d) {
      const double z = static_cast<double>(row[d]) - row[best] - log_threshold;
      rows[static_cast<size_t>(g) * s.devices + d] = d == best || unit(rng) < 1 / (1 + std::exp(-z));
    }
  }
  return rows;
}

}  // namespace placement::learned

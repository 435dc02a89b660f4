#include "policy/ilp/throughput_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "absl/time/clock.h"

namespace placement::ilp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Assignment state with incrementally kept loads and memory, for the local search.
class SearchState {
 public:
  explicit SearchState(const ThroughputModel& m)
      : m_(m), load_(m.num_devices()), mem_(m.num_devices()), stamp_(m.num_devices(), -1) {}

  void Reset(const std::vector<DeviceId>& assignment) {
    dev_ = assignment;
    load_ = m_.Loads(dev_);
    std::fill(mem_.begin(), mem_.end(), 0);
    for (size_t u = 0; u < dev_.size(); ++u) mem_[dev_[u]] += m_.bytes[u];
  }

  const std::vector<DeviceId>& assignment() const { return dev_; }
  DeviceId device(int32_t u) const { return dev_[u]; }
  double load(DeviceId d) const { return load_[d]; }
  bool CanTake(DeviceId d, int64_t add, int64_t remove = 0) const {
    const int64_t cap = m_.units->capacity[d];
    return cap == kUnlimitedBytes || mem_[d] - remove + add <= cap;
  }

  void Move(int32_t u, DeviceId to) {
    const DeviceId from = dev_[u];
    for (int32_t t : m_.touching[u]) Charge(t, -1);
    load_[from] -= m_.units->time_on(u, from);
    mem_[from] -= m_.bytes[u];
    dev_[u] = to;
    load_[to] += m_.units->time_on(u, to);
    mem_[to] += m_.bytes[u];
    for (int32_t t : m_.touching[u]) Charge(t, +1);
  }

  // Lexicographic: the largest load, then the sum of squared loads (which prefers spreading the rest).
  std::pair<double, double> Key() const {
    double mx = 0, sq = 0;
    for (double l : load_) {
      mx = std::max(mx, l);
      sq += l * l;
    }
    return {mx, sq};
  }

 private:
  void Charge(int32_t t, double sign) {
    const CrossingTensor& x = m_.tensors[t];
    const DeviceId from = dev_[x.producer];
    ++tick_;
    bool crosses = false;
    for (int32_t r : x.readers) {
      const DeviceId to = dev_[r];
      if (to == from || stamp_[to] == tick_) continue;
      stamp_[to] = tick_;
      crosses = true;
      if (m_.pays[to]) load_[to] += sign * x.cost;
    }
    if (crosses && m_.pays[from]) load_[from] += sign * x.cost;
  }

  const ThroughputModel& m_;
  std::vector<DeviceId> dev_;
  std::vector<double> load_;
  std::vector<int64_t> mem_;
  std::vector<int64_t> stamp_;
  int64_t tick_ = 0;
};

bool Better(std::pair<double, double> a, std::pair<double, double> b, double eps) {
  if (a.first < b.first - eps) return true;
  return a.first <= b.first + eps && a.second < b.second - eps * std::max(1.0, b.first);
}

// One descent to a local optimum of moves and critical swaps; returns whether anything improved.
bool Descend(const ThroughputModel& m, SearchState& s, double eps, absl::Time stop) {
  const int32_t n = m.units->num_units();
  const int32_t num_devices = m.num_devices();
  bool any = false;
  for (bool improved = true; improved && absl::Now() < stop;) {
    improved = false;
    auto key = s.Key();
    for (int32_t u = 0; u < n; ++u) {
      for (DeviceId b = 0; b < num_devices; ++b) {
        const DeviceId a = s.device(u);
        if (b == a || !m.fits(u, b) || !s.CanTake(b, m.bytes[u])) continue;
        s.Move(u, b);
        if (const auto k = s.Key(); Better(k, key, eps)) {
          key = k;
          improved = any = true;
        } else {
          s.Move(u, a);
        }
      }
    }
    if (improved) continue;
    // Swaps that take a unit off a device at the largest load.
    for (int32_t u = 0; u < n && !improved; ++u) {
      const DeviceId a = s.device(u);
      if (s.load(a) < key.first - eps) continue;
      for (int32_t v = 0; v < n && !improved; ++v) {
        const DeviceId b = s.device(v);
        if (b == a || !m.fits(u, b) || !m.fits(v, a) || !s.CanTake(b, m.bytes[u], m.bytes[v]) ||
            !s.CanTake(a, m.bytes[v], m.bytes[u])) {
          continue;
        }
        s.Move(u, b);
        s.Move(v, a);
        if (Better(s.Key(), key, eps)) {
          improved = any = true;
        } else {
          s.Move(v, b);
          s.Move(u, a);
        }
      }
    }
  }
  return any;
}

}  // namespace

std::vector<double> ThroughputModel::Loads(const std::vector<DeviceId>& unit_device) const {
  std::vector<double> load(num_devices(), 0.0);
  for (int32_t u = 0; u < units->num_units(); ++u) load[unit_device[u]] += units->time_on(u, unit_device[u]);
  std::vector<int32_t> stamp(num_devices(), -1);
  for (int32_t t = 0; t < static_cast<int32_t>(tensors.size()); ++t) {
    const CrossingTensor& x = tensors[t];
    const DeviceId from = unit_device[x.producer];
    bool crosses = false;
    for (int32_t r : x.readers) {
      const DeviceId to = unit_device[r];
      if (to == from || stamp[to] == t) continue;
      stamp[to] = t;
      crosses = true;
      if (pays[to]) load[to] += x.cost;
    }
    if (crosses && pays[from]) load[from] += x.cost;
  }
  return load;
}

double ThroughputModel::MaxLoad(const std::vector<DeviceId>& unit_device) const {
  const std::vector<double> load = Loads(unit_device);
  return *std::max_element(load.begin(), load.end());
}

bool ThroughputModel::FitsMemory(const std::vector<DeviceId>& unit_device) const {
  std::vector<int64_t> mem(num_devices(), 0);
  for (int32_t u = 0; u < units->num_units(); ++u) mem[unit_device[u]] += bytes[u];
  for (DeviceId d = 0; d < num_devices(); ++d) {
    if (units->capacity[d] != kUnlimitedBytes && mem[d] > units->capacity[d]) return false;
  }
  return true;
}

ThroughputModel BuildThroughputModel(const CostModel& costs, const Units& units) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_devices = topo.num_devices();
  ThroughputModel m;
  m.units = &units;
  std::vector<int64_t> params(g.num_ops());
  for (OpId v = 0; v < g.num_ops(); ++v) params[v] = g.param_bytes(v);
  m.bytes = UnitBytes(units, params);
  m.pays.resize(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) m.pays[d] = topo.device(d).type != DeviceType::kCpu;
  m.touching.resize(units.num_units());

  std::vector<uint8_t> reads_on(num_devices);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    const int32_t pu = units.unit_of[v];
    for (EdgeId first = g.out_begin(v), last; first < g.out_end(v); first = last) {
      last = first;
      while (last < g.out_end(v) && g.edge(last).src_output == g.edge(first).src_output) ++last;
      CrossingTensor x;
      x.producer = pu;
      for (EdgeId e = first; e < last; ++e) {
        const int32_t ru = units.unit_of[g.edge(e).dst];
        if (ru != pu && std::find(x.readers.begin(), x.readers.end(), ru) == x.readers.end()) x.readers.push_back(ru);
      }
      if (x.readers.empty()) continue;
      // The transfer time over every pair of devices the two ends may use.
      const TensorId t = g.first_output(v) + g.edge(first).src_output;
      std::fill(reads_on.begin(), reads_on.end(), 0);
      for (int32_t r : x.readers) {
        for (DeviceId d = 0; d < num_devices; ++d) reads_on[d] |= units.allowed(r, d) ? 1 : 0;
      }
      double lo = kInf, hi = 0;
      for (DeviceId a = 0; a < num_devices; ++a) {
        if (!units.allowed(pu, a)) continue;
        for (DeviceId b = 0; b < num_devices; ++b) {
          if (b == a || !reads_on[b]) continue;
          const double c = costs.transfer_time(t, a, b);
          lo = std::min(lo, c);
          hi = std::max(hi, c);
        }
      }
      if (hi <= 0) continue;  // never crosses, or crossing is free
      if (hi - lo > 1e-12 * hi) m.exact = false;
      x.cost = hi;
      const int32_t id = static_cast<int32_t>(m.tensors.size());
      m.touching[pu].push_back(id);
      for (int32_t r : x.readers) m.touching[r].push_back(id);
      m.tensors.push_back(std::move(x));
    }
  }
  return m;
}

std::vector<DeviceId> ContiguousSplit(const ThroughputModel& m) {
  const Units& units = *m.units;
  const int32_t n = units.num_units();
  const int32_t num_devices = m.num_devices();
  // comm[a * n + b]: transfers a device holding units a..b pays.
  std::vector<float> comm(static_cast<size_t>(n) * n, 0.0f);
  {
    std::vector<uint8_t> producer_in(m.tensors.size());
    std::vector<int32_t> readers_in(m.tensors.size());
    auto charge = [&](int32_t t) {
      const CrossingTensor& x = m.tensors[t];
      const bool out = producer_in[t] && readers_in[t] < static_cast<int32_t>(x.readers.size());
      const bool in = !producer_in[t] && readers_in[t] > 0;
      return x.cost * ((out ? 1 : 0) + (in ? 1 : 0));
    };
    for (int32_t a = 0; a < n; ++a) {
      std::fill(producer_in.begin(), producer_in.end(), 0);
      std::fill(readers_in.begin(), readers_in.end(), 0);
      double total = 0;
      for (int32_t b = a; b < n; ++b) {
        for (int32_t t : m.touching[b]) {
          total -= charge(t);
          if (m.tensors[t].producer == b) {
            producer_in[t] = 1;
          } else {
            ++readers_in[t];
          }
          total += charge(t);
        }
        comm[static_cast<size_t>(a) * n + b] = static_cast<float>(std::max(total, 0.0));
      }
    }
  }
  // f[L]: the best largest load placing units 0..L-1 on the devices so far.
  std::vector<double> f(n + 1, kInf), next(n + 1);
  f[0] = 0;
  std::vector<std::vector<int32_t>> cut(num_devices, std::vector<int32_t>(n + 1, 0));  // first unit of the device's run
  std::vector<double> time_prefix(n + 1);
  std::vector<int64_t> byte_prefix(n + 1);
  for (DeviceId d = 0; d < num_devices; ++d) {
    time_prefix[0] = 0;
    byte_prefix[0] = 0;
    for (int32_t u = 0; u < n; ++u) {
      time_prefix[u + 1] = time_prefix[u] + (units.allowed(u, d) ? units.time_on(u, d) : 0.0);
      byte_prefix[u + 1] = byte_prefix[u] + m.bytes[u];
    }
    for (int32_t len = 0; len <= n; ++len) {
      next[len] = f[len];  // an empty run
      cut[d][len] = len;
      for (int32_t a = len - 1; a >= 0; --a) {
        if (!m.fits(a, d)) break;  // nor can any longer run
        if (byte_prefix[len] - byte_prefix[a] > units.capacity[d] && units.capacity[d] != kUnlimitedBytes) break;
        const double compute = time_prefix[len] - time_prefix[a];
        const double load = compute + (m.pays[d] ? comm[static_cast<size_t>(a) * n + len - 1] : 0.0);
        const double value = std::max(f[a], load);
        if (value < next[len]) {
          next[len] = value;
          cut[d][len] = a;
        }
      }
    }
    f.swap(next);
  }
  if (f[n] == kInf) return {};
  std::vector<DeviceId> device(n, kNone);
  for (int32_t d = num_devices - 1, len = n; d >= 0; --d) {
    const int32_t a = cut[d][len];
    for (int32_t u = a; u < len; ++u) device[u] = d;
    len = a;
  }
  return device;
}

std::vector<DeviceId> GreedySplit(const ThroughputModel& m) {
  const int32_t n = m.units->num_units();
  std::vector<DeviceId> device(n, kNone);
  std::vector<int64_t> used(m.num_devices(), 0);
  // Loads of the placed units only: a tensor counts once its producer and a reader are placed.
  auto largest = [&]() {
    std::vector<double> load(m.num_devices(), 0.0);
    for (int32_t u = 0; u < n; ++u) {
      if (device[u] != kNone) load[device[u]] += m.units->time_on(u, device[u]);
    }
    std::vector<uint8_t> charged(m.num_devices());
    for (const CrossingTensor& x : m.tensors) {
      const DeviceId from = device[x.producer];
      if (from == kNone) continue;
      std::fill(charged.begin(), charged.end(), 0);
      bool crosses = false;
      for (int32_t r : x.readers) {
        const DeviceId to = device[r];
        if (to == kNone || to == from || charged[to]) continue;
        charged[to] = 1;
        crosses = true;
        if (m.pays[to]) load[to] += x.cost;
      }
      if (crosses && m.pays[from]) load[from] += x.cost;
    }
    return *std::max_element(load.begin(), load.end());
  };
  for (int32_t u = 0; u < n; ++u) {
    double best = kInf;
    DeviceId best_d = kNone;
    for (DeviceId d = 0; d < m.num_devices(); ++d) {
      if (!m.fits(u, d) || (m.units->capacity[d] != kUnlimitedBytes && used[d] + m.bytes[u] > m.units->capacity[d]))
        continue;
      device[u] = d;
      const double value = largest();
      if (value < best) best = value, best_d = d;
    }
    if (best_d == kNone) return {};
    device[u] = best_d;
    used[best_d] += m.bytes[u];
  }
  return device;
}

std::vector<DeviceId> LocalSearch(const ThroughputModel& m, std::vector<DeviceId> start, uint64_t seed, int rounds,
                                  absl::Time stop) {
  const int32_t n = m.units->num_units();
  if (n == 0) return start;
  SearchState s(m);
  s.Reset(start);
  const double eps = 1e-9 * std::max(1e-30, s.Key().first);
  Descend(m, s, eps, stop);
  s.Reset(s.assignment());  // drop the rounding the incremental updates gathered
  std::vector<DeviceId> best = s.assignment();
  auto best_key = s.Key();
  std::mt19937_64 rng(seed);
  for (int fails = 0; fails < rounds && absl::Now() < stop; ++fails) {
    // Kick: a few random moves, half of them off a device at the largest load.
    const int kicks = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < kicks; ++i) {
      int32_t u = static_cast<int32_t>(rng() % n);
      if (rng() % 2 == 0) {
        for (int tries = 0; tries < 4 * n && s.load(s.device(u)) < best_key.first - eps; ++tries) {
          u = static_cast<int32_t>(rng() % n);
        }
      }
      const DeviceId b = static_cast<DeviceId>(rng() % m.num_devices());
      if (b != s.device(u) && m.fits(u, b) && s.CanTake(b, m.bytes[u])) s.Move(u, b);
    }
    Descend(m, s, eps, stop);
    s.Reset(s.assignment());
    if (const auto k = s.Key(); Better(k, best_key, eps)) {
      best = s.assignment();
      best_key = k;
      fails = -1;
    } else {
      s.Reset(best);
    }
  }
  return best;
}

}  // namespace placement::ilp

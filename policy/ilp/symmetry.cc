#include "policy/ilp/symmetry.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace placement::ilp {

std::vector<std::vector<DeviceId>> InterchangeableDevices(const Topology& topo, const Units& units) {
  std::vector<uint8_t> pinned_to(topo.num_devices(), 0);
  for (DeviceId d : units.pinned) {
    if (d != kNone) pinned_to[d] = 1;
  }
  std::vector<std::vector<DeviceId>> classes;
  std::vector<uint8_t> taken(topo.num_devices(), 0);
  for (DeviceId a = 0; a < topo.num_devices(); ++a) {
    if (taken[a] || pinned_to[a]) continue;
    std::vector<DeviceId> cls = {a};
    for (DeviceId b = a + 1; b < topo.num_devices(); ++b) {
      if (!taken[b] && !pinned_to[b] && topo.kind_index(b) == topo.kind_index(a) &&
          topo.device(b).type == topo.device(a).type && units.capacity[b] == units.capacity[a]) {
        cls.push_back(b);
        taken[b] = 1;
      }
    }
    if (cls.size() > 1) classes.push_back(std::move(cls));
  }
  return classes;
}

void Canonicalize(const std::vector<std::vector<DeviceId>>& classes, int32_t num_units, std::vector<DeviceId>& device) {
  for (const std::vector<DeviceId>& cls : classes) {
    std::vector<std::pair<int32_t, DeviceId>> first;
    for (DeviceId d : cls) {
      int32_t f = num_units;
      for (int32_t u = 0; u < num_units && f == num_units; ++u) {
        if (device[u] == d) f = u;
      }
      first.emplace_back(f, d);
    }
    std::sort(first.begin(), first.end());
    std::vector<DeviceId> relabel(*std::max_element(cls.begin(), cls.end()) + 1, kNone);
    for (size_t p = 0; p < cls.size(); ++p) relabel[first[p].second] = cls[p];
    for (DeviceId& d : device) {
      if (d < static_cast<DeviceId>(relabel.size()) && relabel[d] != kNone) d = relabel[d];
    }
  }
}

std::vector<RunningSum> AddSymmetryRows(Milp& milp, const std::vector<std::vector<DeviceId>>& classes, int32_t n,
                                        const std::function<Milp::Terms(int32_t, DeviceId)>& on) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<RunningSum> out;
  for (const std::vector<DeviceId>& cls : classes) {
    std::vector<int> prev_running(n, -1);
    for (size_t p = 0; p < cls.size(); ++p) {
      const DeviceId d = cls[p];
      std::vector<int> running(n, -1);
      for (int32_t i = 0; i < n; ++i) {
        const Milp::Terms here = on(i, d);
        if (p > 0 && !here.empty()) {
          Milp::Terms row = here;
          if (i > 0 && prev_running[i - 1] >= 0) row.emplace_back(prev_running[i - 1], -1.0);
          milp.AddRow(-kInf, 0, row);  // with no lower unit on the previous device: 0
        }
        if (p + 1 == cls.size()) continue;  // the last device's running sums are never read
        running[i] = milp.AddColumn(0, i + 1, 0, false);
        out.push_back({running[i], i, d});
        Milp::Terms row = {{running[i], 1.0}};
        if (i > 0) row.emplace_back(running[i - 1], -1.0);
        for (const auto& [col, coefficient] : here) row.emplace_back(col, -coefficient);
        milp.AddRow(0, 0, row);
      }
      prev_running = std::move(running);
    }
  }
  return out;
}

void SetRunningSums(const std::vector<RunningSum>& running, const std::vector<DeviceId>& device, int32_t num_devices,
                    std::vector<double>& start) {
  // count[i * D + d]: units 0..i on d.
  std::vector<int32_t> count(device.size() * num_devices, 0);
  for (size_t i = 0; i < device.size(); ++i) {
    if (i > 0) std::copy_n(count.begin() + (i - 1) * num_devices, num_devices, count.begin() + i * num_devices);
    ++count[i * num_devices + device[i]];
  }
  for (const RunningSum& r : running) start[r.col] = count[static_cast<size_t>(r.unit) * num_devices + r.device];
}

}  // namespace placement::ilp

#include "simulator/collectives.h"

#include <algorithm>
#include <map>

namespace placement {
namespace {

// The group by host, hosts and devices in ascending order.
std::map<int32_t, std::vector<DeviceId>> ByHost(const Topology& t, absl::Span<const DeviceId> group) {
  std::map<int32_t, std::vector<DeviceId>> hosts;
  for (DeviceId d : group) hosts[t.device(d).host].push_back(d);
  for (auto& [host, devices] : hosts) std::sort(devices.begin(), devices.end());
  return hosts;
}

// Each device of `ring` sends to the next, wrapping around.
std::vector<std::pair<DeviceId, DeviceId>> RingSends(const std::vector<DeviceId>& ring) {
  std::vector<std::pair<DeviceId, DeviceId>> sends;
  for (size_t i = 0; i < ring.size(); ++i) sends.emplace_back(ring[i], ring[(i + 1) % ring.size()]);
  return sends;
}

// Each step's sends in batches that share no link resource, batch after batch: requested in that order, the
// transfers of a batch run together and no transfer holds a free resource waiting for a busy one (a ring's sends
// in their own order would chain, each waiting for the one before it through a shared interface).
void OrderSends(const Topology& t, CollectiveStep& step) {
  std::vector<std::pair<DeviceId, DeviceId>> left = std::move(step.sends), ordered;
  while (!left.empty()) {
    std::vector<uint8_t> used(t.num_resources(), 0);
    std::vector<std::pair<DeviceId, DeviceId>> later;
    for (const auto& send : left) {
      const absl::Span<const int32_t> links = t.path_resources(t.path(send.first, send.second));
      const bool free = std::none_of(links.begin(), links.end(), [&](int32_t r) { return used[r] != 0; });
      if (!free) {
        later.push_back(send);
        continue;
      }
      for (int32_t r : links) used[r] = 1;
      ordered.push_back(send);
    }
    left = std::move(later);
  }
  step.sends = std::move(ordered);
}

AllReducePlan Finish(const Topology& t, AllReducePlan plan) {
  for (CollectiveStep& step : plan.steps) OrderSends(t, step);
  plan.seconds = 0;
  for (const CollectiveStep& step : plan.steps) plan.seconds += step.repeat * StepSeconds(t, step);
  return plan;
}

AllReducePlan Ring(const Topology& t, const std::map<int32_t, std::vector<DeviceId>>& hosts, double bytes) {
  std::vector<DeviceId> ring;
  for (const auto& [host, devices] : hosts) ring.insert(ring.end(), devices.begin(), devices.end());
  const int32_t r = static_cast<int32_t>(ring.size());
  AllReducePlan plan;
  plan.kind = AllReduceKind::kRing;
  plan.steps.push_back(CollectiveStep{bytes / r, 2 * (r - 1), RingSends(ring)});
  return Finish(t, std::move(plan));
}

AllReducePlan Hierarchical(const Topology& t, const std::map<int32_t, std::vector<DeviceId>>& hosts, double bytes) {
  const int32_t h = static_cast<int32_t>(hosts.size());
  const int32_t l = static_cast<int32_t>(hosts.begin()->second.size());
  CollectiveStep inside{bytes / l, l - 1, {}};
  CollectiveStep across{bytes / (static_cast<double>(l) * h), 2 * (h - 1), {}};
  for (const auto& [host, devices] : hosts) {
    for (const auto& send : RingSends(devices)) inside.sends.push_back(send);
  }
  for (int32_t k = 0; k < l; ++k) {
    std::vector<DeviceId> ring;
    for (const auto& [host, devices] : hosts) ring.push_back(devices[k]);
    for (const auto& send : RingSends(ring)) across.sends.push_back(send);
  }
  AllReducePlan plan;
  plan.kind = AllReduceKind::kHierarchical;
  plan.steps = {inside, across, inside};
  return Finish(t, std::move(plan));
}

struct Interval {
  double start = 0, end = 0;
};

// When each of the step's sends runs, in its order: a send starts once every link resource on its path is free and
// holds them all until it ends (the simulator's discipline).
std::vector<Interval> ScheduleStep(const Topology& t, const CollectiveStep& step) {
  std::map<int32_t, double> free_at;
  std::vector<Interval> out;
  out.reserve(step.sends.size());
  for (const auto& [from, to] : step.sends) {
    const Path& p = t.path(from, to);
    const absl::Span<const int32_t> links = t.path_resources(p);
    double start = 0;
    for (int32_t r : links) start = std::max(start, free_at[r]);
    const double end = start + p.latency + step.bytes / p.bandwidth;
    for (int32_t r : links) free_at[r] = end;
    out.push_back(Interval{start, end});
  }
  return out;
}

// The union of `x` as disjoint intervals in order.
std::vector<Interval> Merged(std::vector<Interval> x) {
  std::sort(x.begin(), x.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : x) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace

absl::string_view AllReduceName(AllReduceKind kind) {
  switch (kind) {
    case AllReduceKind::kRing:
      return "ring";
    case AllReduceKind::kHierarchical:
      return "hierarchical";
    case AllReduceKind::kNone:
      break;
  }
  return "none";
}

AllReducePlan PlanAllReduce(const Topology& topology, absl::Span<const DeviceId> group, double bytes) {
  if (group.size() < 2) return AllReducePlan{};
  const std::map<int32_t, std::vector<DeviceId>> hosts = ByHost(topology, group);
  AllReducePlan best = Ring(topology, hosts, bytes);
  const size_t per_host = hosts.begin()->second.size();
  const bool even = std::all_of(hosts.begin(), hosts.end(), [&](const auto& h) { return h.second.size() == per_host; });
  if (hosts.size() >= 2 && per_host >= 2 && even) {
    AllReducePlan hierarchical = Hierarchical(topology, hosts, bytes);
    if (hierarchical.seconds < best.seconds) best = std::move(hierarchical);
  }
  return best;
}

double StepSeconds(const Topology& topology, const CollectiveStep& step) {
  double last = 0;
  for (const Interval& send : ScheduleStep(topology, step)) last = std::max(last, send.end);
  return last;
}

double SecondsUnavailable(const Topology& topology, const AllReducePlan& plan, int32_t resource, double seconds) {
  double total = 0;
  for (const CollectiveStep& step : plan.steps) {
    const std::vector<Interval> sends = ScheduleStep(topology, step);
    std::vector<Interval> busy;
    double length = 0;
    for (size_t i = 0; i < sends.size(); ++i) {
      length = std::max(length, sends[i].end);
      const absl::Span<const int32_t> links =
          topology.path_resources(topology.path(step.sends[i].first, step.sends[i].second));
      if (std::find(links.begin(), links.end(), resource) != links.end()) busy.push_back(sends[i]);
    }
    if (busy.empty()) continue;
    busy = Merged(std::move(busy));
    double held = busy.back().end - busy.front().start;
    for (size_t i = 1; i < busy.size(); ++i) {
      if (busy[i].start - busy[i - 1].end >= seconds) held -= busy[i].start - busy[i - 1].end;
    }
    // Between one repeat's last send and the next one's first.
    const double wrap = length - busy.back().end + busy.front().start;
    total += step.repeat * held + (step.repeat - 1) * (wrap >= seconds ? 0 : wrap);
  }
  return total;
}

void AddLinkBusy(const Topology& topology, const AllReducePlan& plan, double scale, std::vector<double>& busy) {
  for (const CollectiveStep& step : plan.steps) {
    for (const auto& [from, to] : step.sends) {
      const Path& p = topology.path(from, to);
      const double seconds = scale * step.repeat * (p.latency + step.bytes / p.bandwidth);
      for (int32_t r : topology.path_resources(p)) busy[r] += seconds;
    }
  }
}

}  // namespace placement

// Test helper: whether a placement is a contiguous split, i.e. its devices can be ordered so that every
// prefix of devices holds a down-closed set of the forward DAG. That is the case exactly when the forward
// edges between devices form no cycle.
#pragma once

#include <algorithm>
#include <vector>

#include "graph/graph.h"
#include "graph/placement.h"

namespace placement::testing_internal {

inline bool IsContiguous(const Graph& g, const Placement& p) {
  int32_t devices = 0;
  for (DeviceId d : p.device) devices = std::max(devices, d + 1);
  std::vector<std::vector<uint8_t>> edge(devices, std::vector<uint8_t>(devices, 0));
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& x = g.edge(e);
    if (g.is_backward(x.src) || g.is_backward(x.dst)) continue;
    const DeviceId a = p.device[x.src], b = p.device[x.dst];
    if (a != b) edge[a][b] = 1;
  }
  // Kahn's algorithm over the device graph.
  std::vector<int32_t> indegree(devices, 0);
  for (int32_t a = 0; a < devices; ++a) {
    for (int32_t b = 0; b < devices; ++b) indegree[b] += edge[a][b];
  }
  std::vector<int32_t> ready;
  for (int32_t d = 0; d < devices; ++d) {
    if (indegree[d] == 0) ready.push_back(d);
  }
  int32_t seen = 0;
  while (!ready.empty()) {
    const int32_t a = ready.back();
    ready.pop_back();
    ++seen;
    for (int32_t b = 0; b < devices; ++b) {
      if (edge[a][b] && --indegree[b] == 0) ready.push_back(b);
    }
  }
  return seen == devices;
}

}  // namespace placement::testing_internal

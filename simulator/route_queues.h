// Transfers requested but not finished, one FIFO per route (ordered device pair).
//
// Internal to the simulator library. All transfers on a route cross the same links, and links are reserved
// in request order until a transfer ends, so on one route a transfer starts only after the one before it
// has ended: start, end, start, end... never decreases along a route. Only a route's head can therefore be
// due next, and the event queue holds one event per busy route instead of every transfer in flight, which
// keeps it a few dozen entries deep however congested the links get.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace placement {

class RouteQueues {
 public:
  // Room for exactly `capacity[r]` transfers on route r over the whole step.
  explicit RouteQueues(const std::vector<int32_t>& capacity) : head_(capacity.size()), tail_(capacity.size()) {
    int32_t next = 0;
    for (size_t r = 0; r < capacity.size(); ++r) {
      head_[r] = tail_[r] = next;
      next += capacity[r];
    }
    slot_.resize(next);
  }

  // Returns true when the route was idle, so that the transfer is its head.
  bool Append(int32_t route, int32_t transfer) {
    slot_[tail_[route]++] = transfer;
    return tail_[route] - head_[route] == 1;
  }
  int32_t head(int32_t route) const { return slot_[head_[route]]; }
  // Drops the head and returns the next one, or kNone when the route is idle.
  int32_t PopHead(int32_t route) {
    ++head_[route];
    return head_[route] < tail_[route] ? slot_[head_[route]] : kNone;
  }

 private:
  std::vector<int32_t> slot_;  // route r's transfers in request order
  std::vector<int32_t> head_;  // per route
  std::vector<int32_t> tail_;  // per route: where the next request goes
};

}  // namespace placement

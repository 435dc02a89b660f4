#include "client/chart/bars.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace placement::chart {
namespace {

Row MergeRow(const Row& in, double threshold, bool keep_critical_apart) {
  Row out;
  out.reserve(in.size());
  double longest_of_last = 0;  // duration of out.back()'s longest entry
  for (const Bar& b : in) {
    if (!out.empty()) {
      Bar& last = out.back();
      // A merged bar grows until it is itself as wide as the threshold, so a row keeps about one bar per
      // threshold's width of busy time rather than collapsing into one.
      const bool short_pair = last.end - last.start < threshold && b.end - b.start < threshold;
      if (short_pair && b.start - last.end < threshold && (!keep_critical_apart || last.critical == b.critical)) {
        last.end = std::max(last.end, b.end);
        last.last = b.last;
        last.count += b.count;
        last.busy += b.busy;
        last.critical = last.critical || b.critical;
        if (b.end - b.start > longest_of_last) {
          longest_of_last = b.end - b.start;
          last.longest = b.longest;
        }
        continue;
      }
    }
    out.push_back(b);
    longest_of_last = b.end - b.start;
  }
  return out;
}

}  // namespace

Bar SingleBar(int32_t entry, double start, double end, bool critical) {
  return Bar{start, end, entry, entry, 1, end - start, entry, critical};
}

std::vector<Row> PackLanes(const Row& bars, int32_t max_lanes) {
  std::vector<Row> lanes;
  std::vector<double> free_at;
  for (const Bar& b : bars) {
    size_t lane = lanes.size();
    for (size_t k = 0; k < lanes.size(); ++k) {
      if (free_at[k] <= b.start) {
        lane = k;
        break;
      }
    }
    if (lane == lanes.size()) {
      if (static_cast<int32_t>(lanes.size()) < max_lanes) {
        lanes.emplace_back();
        free_at.push_back(0);
      } else {
        lane = std::min_element(free_at.begin(), free_at.end()) - free_at.begin();
      }
    }
    lanes[lane].push_back(b);
    free_at[lane] = std::max(free_at[lane], b.end);
  }
  return lanes;
}

int64_t CountBars(const std::vector<Row*>& rows) {
  int64_t n = 0;
  for (const Row* r : rows) n += static_cast<int64_t>(r->size());
  return n;
}

double MergeShortBars(const std::vector<Row*>& rows, double seconds_per_px, double plot_width_px, int64_t max_bars) {
  if (CountBars(rows) <= max_bars) return 0;
  for (double px = 1;; px *= 2) {
    const bool keep_critical_apart = px <= plot_width_px;
    std::vector<Row> merged;
    merged.reserve(rows.size());
    int64_t count = 0;
    for (const Row* r : rows) {
      merged.push_back(MergeRow(*r, px * seconds_per_px, keep_critical_apart));
      count += static_cast<int64_t>(merged.back().size());
    }
    // Past twice the plot's width every bar is short and every gap small: each row is down to one bar.
    if (count <= max_bars || px > 2 * plot_width_px) {
      for (size_t i = 0; i < rows.size(); ++i) *rows[i] = std::move(merged[i]);
      return px;
    }
  }
}

}  // namespace placement::chart

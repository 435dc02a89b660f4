// The bars of the chart's rows, and the merging that keeps a chart of a huge graph to a readable size.
// Internal to the chart library.
#pragma once

#include <cstdint>
#include <vector>

namespace placement::chart {

// One drawn bar: one timeline entry, or a run of short neighbours merged into one.
struct Bar {
  double start = 0;
  double end = 0;
  int32_t first = 0;    // timeline index of the first entry it stands for
  int32_t last = 0;     // ... and of the last
  int32_t count = 1;    // entries it stands for
  double busy = 0;      // their summed durations
  int32_t longest = 0;  // timeline index of the longest entry, whose colour a merged bar takes
  bool critical = false;
};

using Row = std::vector<Bar>;  // sorted by start

Bar SingleBar(int32_t entry, double start, double end, bool critical);

// Deals bars (sorted by start) into at most `max_lanes` rows so that bars overlapping in time sit in
// different rows where they can: each goes to the first row free by its start, or, when all are taken and
// no more may open, to the row that frees first.
std::vector<Row> PackLanes(const Row& bars, int32_t max_lanes);

int64_t CountBars(const std::vector<Row*>& rows);

// When the rows hold more than `max_bars` bars, merges runs of neighbours in each row that are each narrower
// than a threshold and lie closer than it, raising the threshold (1, 2, 4... pixels at `seconds_per_px`)
// until the count fits. Critical bars merge only with critical ones until the threshold passes the plot's
// width. Returns the threshold in pixels, 0 when nothing was merged.
double MergeShortBars(const std::vector<Row*>& rows, double seconds_per_px, double plot_width_px, int64_t max_bars);

}  // namespace placement::chart

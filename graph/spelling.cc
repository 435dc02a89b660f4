#include "graph/spelling.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace placement {

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestSpelling(absl::string_view name, const std::vector<std::string>& candidates) {
  std::string nearest;
  size_t best = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const size_t d = EditDistance(name, candidate);
    if (d < best) {
      best = d;
      nearest = candidate;
    }
  }
  if (!nearest.empty()) return nearest;
  // A word with a tail added or cut off ("batchsize", "seq_len", "devi") is far in edits but plainly meant, when
  // only one candidate is so ("ilp" could be any of three placers).
  for (const std::string& candidate : candidates) {
    const absl::string_view shorter = candidate.size() < name.size() ? absl::string_view(candidate) : name;
    const absl::string_view longer = candidate.size() < name.size() ? name : absl::string_view(candidate);
    if (shorter.size() < 3 || !absl::StartsWith(longer, shorter)) continue;
    if (!nearest.empty()) return "";
    nearest = candidate;
  }
  return nearest;
}

}  // namespace placement

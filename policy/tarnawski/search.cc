#include "policy/tarnawski/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

namespace placement::tarnawski {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int32_t kMaxKickMoves = 3;

struct Score {
  double latency = kInf;
  double finish_sum = kInf;

  bool Beats(const Score& o) const {
    const double eps = 1e-12 * std::max(1.0, std::abs(o.latency));
    if (latency < o.latency - eps) return true;
    return latency <= o.latency + eps && finish_sum < o.finish_sum - 1e-12 * std::max(1.0, std::abs(o.finish_sum));
  }
};

std::vector<std::vector<int32_t>> Neighbours(const Instance& in) {
  const Graph& g = in.graph();
  std::vector<std::vector<int32_t>> next(in.num_units());
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int32_t a = in.units.unit_of[g.edge(e).src], b = in.units.unit_of[g.edge(e).dst];
    if (a == b) continue;
    next[a].push_back(b);
    next[b].push_back(a);
  }
  for (std::vector<int32_t>& n : next) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  return next;
}

class Search {
 public:
  Search(const Instance& in, std::vector<DeviceId> start, const SearchOptions& options, const Budget& budget)
      : in_(in),
        scorer_(in),
        budget_(budget),
        options_(options),
        rng_(options.seed),
        neighbours_(Neighbours(in)),
        split_(std::move(start)),
        used_(in.Used(split_)) {
    current_ = Evaluate();
  }

  SearchOutcome Run() {
    SearchOutcome out;
    Descend();
    std::vector<DeviceId> best = split_;
    Score best_score = current_;
    int32_t stale = 0;
    while (stale < options_.patience && !budget_.Expired()) {
      Kick();
      Descend();
      ++out.kicks;
      if (current_.Beats(best_score)) {
        if (current_.latency < best_score.latency) ++out.improvements;
        best = split_;
        best_score = current_;
        stale = 0;
      } else {
        Restore(best, best_score);
        ++stale;
      }
    }
    out.converged = stale >= options_.patience;
    out.split = std::move(best);
    out.latency = best_score.latency;
    out.evaluations = evaluations_;
    return out;
  }

 private:
  Score Evaluate() {
    ++evaluations_;
    Score s{scorer_.Latency(split_), 0};
    if (s.latency == kInf || !scorer_.Contiguous()) return Score{};
    s.finish_sum = scorer_.model().finish_sum();
    return s;
  }

  // Devices worth trying for u: its CPU, its neighbours' accelerators, the empty accelerators.
  void Candidates(int32_t u, std::vector<DeviceId>& out) const {
    out.clear();
    auto add = [&](DeviceId d) {
      if (d != kNone && d != split_[u] && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    };
    add(in_.cpu_of[u]);
    for (int32_t w : neighbours_[u]) {
      if (in_.is_accelerator[split_[w]]) add(split_[w]);
    }
    for (DeviceId a : in_.accelerators) {
      if (used_[a] == 0) add(a);
    }
  }

  bool Fits(int32_t u, DeviceId d) const {
    if (!in_.units.allowed(u, d)) return false;
    return !in_.is_accelerator[d] || used_[d] + in_.bytes[u] <= in_.units.capacity[d];
  }

  void Apply(int32_t u, DeviceId d) {
    used_[split_[u]] -= in_.bytes[u];
    used_[d] += in_.bytes[u];
    split_[u] = d;
  }

  // Moves u to d and keeps it when `accept` says so of the new score; returns whether it was kept.
  template <typename Accept>
  bool TryMove(int32_t u, DeviceId d, Accept accept) {
    if (!Fits(u, d)) return false;
    const DeviceId from = split_[u];
    Apply(u, d);
    const Score s = Evaluate();
    if (s.latency != kInf && accept(s)) {
      current_ = s;
      return true;
    }
    Apply(u, from);
    return false;
  }

  void Descend() {
    std::vector<int32_t> order(in_.num_units());
    std::iota(order.begin(), order.end(), 0);
    std::vector<DeviceId> candidates;
    bool improved = true;
    while (improved && !budget_.Expired()) {
      improved = false;
      std::shuffle(order.begin(), order.end(), rng_);
      for (int32_t u : order) {
        Candidates(u, candidates);
        for (DeviceId d : candidates) {
          if (TryMove(u, d, [&](const Score& s) { return s.Beats(current_); })) {
            improved = true;
            break;
          }
        }
        if (budget_.Expired()) return;
      }
    }
  }

  // A few random allowed moves, whatever they cost.
  void Kick() {
    const int32_t moves = 1 + static_cast<int32_t>(rng_() % kMaxKickMoves);
    std::vector<DeviceId> candidates;
    for (int32_t m = 0, tries = 0; m < moves && tries < 20 * moves; ++tries) {
      const int32_t u = static_cast<int32_t>(rng_() % in_.num_units());
      Candidates(u, candidates);
      if (candidates.empty()) continue;
      const DeviceId d = candidates[rng_() % candidates.size()];
      if (TryMove(u, d, [](const Score&) { return true; })) ++m;
    }
  }

  void Restore(const std::vector<DeviceId>& split, const Score& score) {
    split_ = split;
    used_ = in_.Used(split_);
    current_ = score;
  }

  const Instance& in_;
  SplitScorer scorer_;
  const Budget& budget_;
  const SearchOptions& options_;
  std::mt19937_64 rng_;
  const std::vector<std::vector<int32_t>> neighbours_;
  std::vector<DeviceId> split_;
  std::vector<int64_t> used_;
  Score current_;
  int64_t evaluations_ = 0;
};

}  // namespace

bool IsContiguousSplit(const Instance& instance, SplitScorer& scorer, const std::vector<DeviceId>& split) {
  if (split.size() != static_cast<size_t>(instance.num_units()) || !instance.FitsMemory(split)) return false;
  return scorer.Latency(split) != kInf && scorer.Contiguous();
}

SearchOutcome SearchSplit(const Instance& instance, std::vector<DeviceId> start, const SearchOptions& options,
                          const Budget& budget) {
  Search search(instance, std::move(start), options, budget);
  return search.Run();
}

}  // namespace placement::tarnawski

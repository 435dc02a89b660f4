#include "policy/heuristics/favourite_child_lp.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "ClpEventHandler.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace placement::heuristics {
namespace {

// CLP's own time limit is checked only now and then (a 30k-operator LP ran 17 s on a 5 s limit); this handler
// stops the simplex at the first event past the stop time, which CLP raises at least once per iteration.
class StopAt : public ClpEventHandler {
 public:
  explicit StopAt(absl::Time stop) : stop_(stop) {}
  int event(Event) override { return absl::Now() >= stop_ ? 0 : -1; }
  ClpEventHandler* clone() const override { return new StopAt(*this); }

 private:
  absl::Time stop_;
};

// The LP in coordinate form: x_e (edge e's transfer is paid) for e < m, then s_v, then the makespan w.
struct FavouriteChildLp {
  std::vector<int> rows, cols;
  std::vector<double> values, row_lo, row_hi;
  int num_rows = 0;

  void Add(int row, int col, double value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  }
  void EndRow(double lo, double hi) {
    row_lo.push_back(lo);
    row_hi.push_back(hi);
    ++num_rows;
  }
};

constexpr double kInf = std::numeric_limits<double>::infinity();

FavouriteChildLp BuildLp(const CostModel& costs, absl::Span<const double> mean_edge, double scale) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops(), m = g.num_edges();
  const int32_t s0 = m, w = m + n;
  FavouriteChildLp lp;
  lp.rows.reserve(3 * static_cast<size_t>(m) + 2 * static_cast<size_t>(n));
  lp.cols.reserve(lp.rows.capacity());
  lp.values.reserve(lp.rows.capacity());
  for (EdgeId e = 0; e < m; ++e) {  // s_i - s_j + c_e x_e <= -p_i
    const Edge& edge = g.edge(e);
    lp.Add(lp.num_rows, s0 + edge.src, 1.0);
    lp.Add(lp.num_rows, s0 + edge.dst, -1.0);
    if (mean_edge[e] > 0) lp.Add(lp.num_rows, e, scale * mean_edge[e]);
    lp.EndRow(-kInf, -scale * costs.fastest_time(edge.src));
  }
  for (OpId v = 0; v < n; ++v) {
    const int32_t out = g.out_end(v) - g.out_begin(v);
    if (out >= 2) {  // at most one favourite child
      for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) lp.Add(lp.num_rows, e, 1.0);
      lp.EndRow(out - 1, kInf);
    }
    if (g.in_degree(v) >= 2) {  // at most one favourite parent
      for (EdgeId e : g.in_edges(v)) lp.Add(lp.num_rows, e, 1.0);
      lp.EndRow(g.in_degree(v) - 1, kInf);
    }
    if (out == 0) {  // s_v + p_v <= w
      lp.Add(lp.num_rows, s0 + v, 1.0);
      lp.Add(lp.num_rows, w, -1.0);
      lp.EndRow(-kInf, -scale * costs.fastest_time(v));
    }
  }
  return lp;
}

// Solves it within `seconds`; the column values, or empty with a note when it did not solve.
std::vector<double> SolveLp(const FavouriteChildLp& lp, int32_t num_ops, int32_t num_edges, double seconds,
                            std::string* note) {
  const int32_t num_cols = num_edges + num_ops + 1;
  std::vector<double> col_lo(num_cols, 0.0), col_hi(num_cols, kInf), objective(num_cols, 0.0);
  std::fill(col_hi.begin(), col_hi.begin() + num_edges, 1.0);
  objective[num_cols - 1] = 1.0;
  CoinPackedMatrix matrix(false, lp.rows.data(), lp.cols.data(), lp.values.data(),
                          static_cast<CoinBigIndex>(lp.values.size()));
  matrix.setDimensions(lp.num_rows, num_cols);
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.getModelPtr()->messageHandler()->setLogLevel(0);
  solver.getModelPtr()->setMaximumSeconds(seconds);
  solver.getModelPtr()->setMaximumWallSeconds(seconds);
  StopAt stop(absl::Now() + absl::Seconds(seconds));
  solver.getModelPtr()->passInEventHandler(&stop);
  solver.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), lp.row_lo.data(), lp.row_hi.data());
  // Presolve halves the dual simplex's time on these difference-constraint LPs, up to a size: its doubleton pass
  // grows faster than linearly and cannot be interrupted (layered DAGs on 8 devices: 10k operators 2.1 s with it,
  // 6.0 s without; 30k operators 14 s in presolve alone, past a 10 s deadline). Above the size the simplex runs
  // without it, where StopAt keeps it to the deadline.
  constexpr int32_t kMaxPresolveOps = 12000;
  solver.setHintParam(OsiDoPresolveInInitial, num_ops <= kMaxPresolveOps, OsiHintDo);
  solver.initialSolve();
  if (!solver.isProvenOptimal()) {
    *note = solver.isIterationLimitReached() || solver.getModelPtr()->hitMaximumIterations()
                ? absl::StrCat("the favourite-child LP hit its ", seconds, " s limit")
                : "the favourite-child LP was not solved to optimality";
    return {};
  }
  const double* x = solver.getColSolution();
  return std::vector<double>(x, x + num_cols);
}

// Rounds the LP: edges whose transfer it mostly avoids, most avoided first, each source and destination used once.
void RoundChildren(const Graph& g, absl::Span<const double> mean_edge, const std::vector<double>& x,
                   FavouriteChildren* result) {
  std::vector<EdgeId> candidates;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    if (mean_edge[e] > 0 && x[e] < 0.5) candidates.push_back(e);
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](EdgeId a, EdgeId b) { return x[a] != x[b] ? x[a] < x[b] : a < b; });
  std::vector<uint8_t> has_parent(g.num_ops(), 0);
  for (EdgeId e : candidates) {
    const Edge& edge = g.edge(e);
    if (result->child[edge.src] != kNone || has_parent[edge.dst]) continue;
    result->child[edge.src] = edge.dst;
    has_parent[edge.dst] = 1;
    ++result->count;
  }
}

}  // namespace

FavouriteChildren SolveFavouriteChildren(const CostModel& costs, absl::Span<const double> mean_edge, double seconds) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops();
  const int32_t m = g.num_edges();
  FavouriteChildren result;
  result.child.assign(n, kNone);
  if (m == 0) {
    result.solved = true;
    return result;
  }
  double total = 0;
  for (OpId v = 0; v < n; ++v) total += costs.fastest_time(v);
  for (EdgeId e = 0; e < m; ++e) total += mean_edge[e];
  // Times in units of the mean operator-plus-edge time: CLP is quicker on well-scaled rows.
  const double scale = total > 0 ? n / total : 1.0;
  const std::vector<double> x = SolveLp(BuildLp(costs, mean_edge, scale), n, m, seconds, &result.note);
  if (x.empty()) return result;
  result.solved = true;
  result.lp_makespan = x[m + n] / scale;
  RoundChildren(g, mean_edge, x, &result);
  return result;
}

}  // namespace placement::heuristics

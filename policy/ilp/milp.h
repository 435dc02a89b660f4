// A mixed-integer program in row form, and its solution by COIN-OR CBC (branch and cut over CLP).
//
// The placers build their models here column by column and row by row, then hand them to SolveMilp, which
// runs CBC (CbcModel over OsiClpSolverInterface, not the CbcMain driver, which keeps global state) with the cut
// generators of CBC's standalone solver, the rounding, local-search and RINS heuristics (and the feasibility
// pump when there is no warm start), the caller's warm start, and the budget checked at every node and every
// simplex iteration, so that deadlines and cancellations hold on large models too. CBC prints nothing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "policy/placer.h"

namespace placement::ilp {

// The time the ILP placers give themselves when the budget has no deadline.
inline constexpr double kDefaultIlpSeconds = 60;

class Milp {
 public:
  using Terms = std::vector<std::pair<int, double>>;

  // Returns the column's index. Objective: minimize the sum of cost * column.
  int AddColumn(double lo, double hi, double cost, bool integer);
  // lo <= sum(terms) <= hi; use +-infinity for one-sided rows. Zero coefficients are dropped.
  void AddRow(double lo, double hi, const Terms& terms);

  int num_columns() const { return static_cast<int>(col_lo_.size()); }
  int num_rows() const { return static_cast<int>(row_lo_.size()); }
  int num_integers() const;
  int64_t num_nonzeros() const { return static_cast<int64_t>(values_.size()); }

  // Whether `x` satisfies every bound, row and integrality within `tolerance` (for warm starts and tests).
  bool Satisfies(const std::vector<double>& x, double tolerance = 1e-6) const;
  double Objective(const std::vector<double>& x) const;

 private:
  friend struct MilpSolver;
  std::vector<double> col_lo_, col_hi_, cost_;
  std::vector<uint8_t> integer_;
  std::vector<double> row_lo_, row_hi_;
  std::vector<int> row_index_, col_index_;
  std::vector<double> values_;
};

struct MilpOptions {
  double max_seconds = kDefaultIlpSeconds;     // wall clock, on top of the budget's deadline
  const std::vector<double>* start = nullptr;  // a feasible solution to start from (optional)
};

struct MilpResult {
  bool has_solution = false;
  bool proven_optimal = false;
  bool proven_infeasible = false;
  bool stopped = false;  // by the time limit, the deadline or cancellation
  std::vector<double> solution;
  double objective = 0;
  double bound = 0;  // the best proven lower bound on the optimum; -infinity when none is known
  int64_t nodes = 0;
  double seconds = 0;
  bool start_accepted = false;

  // "cbc: optimal 12.5 (bound 12.5), 340 nodes, 1.2 s" and the like.
  std::string Summary() const;
};

MilpResult SolveMilp(const Milp& milp, const MilpOptions& options, const Budget& budget);

}  // namespace placement::ilp

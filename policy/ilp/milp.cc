#include "policy/ilp/milp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

// CbcModel.hpp first, in a block of its own: the other CBC headers rely on its declarations.
#include "CbcModel.hpp"

#include "CbcCutGenerator.hpp"
#include "CbcEventHandler.hpp"
#include "CbcHeuristic.hpp"
#include "CbcHeuristicFPump.hpp"
#include "CbcHeuristicLocal.hpp"
#include "CbcHeuristicRINS.hpp"
#include "CglClique.hpp"
#include "CglFlowCover.hpp"
#include "CglGomory.hpp"
#include "CglKnapsackCover.hpp"
#include "CglMixedIntegerRounding2.hpp"
#include "CglProbing.hpp"
#include "CglTwomir.hpp"
#include "ClpEventHandler.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace placement::ilp {
namespace {

// What the two event handlers below share with the solve (CBC and CLP clone their handlers, so the state lives
// behind a pointer): the budget, whether it ran out in the middle of an LP, and the best bound known to hold.
struct StopState {
  Budget budget;
  bool fired = false;
  double bound = -std::numeric_limits<double>::infinity();
};

// Stops the search at the next node once the budget has run out. (It does not sample CBC's bound: in the
// middle of the search the node being processed is out of the tree, and the tree's bound can exceed the truth.)
class NodeEvents : public CbcEventHandler {
 public:
  explicit NodeEvents(std::shared_ptr<StopState> state) : state_(std::move(state)) {}
  CbcAction event(CbcEvent) override { return state_->budget.Expired() ? stop : noAction; }
  CbcEventHandler* clone() const override { return new NodeEvents(*this); }

 private:
  std::shared_ptr<StopState> state_;
};

// Stops every simplex run once the budget has run out: CBC checks its clock only between phases, and a root
// cut round, strong branching or a heuristic's sub-search on a large model can outlast the deadline. Once it
// has fired, nothing CBC proves afterwards is trusted, since a cut-short LP can look infeasible.
class LpEvents : public ClpEventHandler {
 public:
  explicit LpEvents(std::shared_ptr<StopState> state) : state_(std::move(state)) {}
  int event(Event which) override {
    if (which != endOfIteration) return -1;
    if (state_->fired) return 0;
    if ((++iterations_ & 15) != 0 || !state_->budget.Expired()) return -1;
    state_->fired = true;
    return 0;
  }
  ClpEventHandler* clone() const override { return new LpEvents(*this); }

 private:
  std::shared_ptr<StopState> state_;
  int iterations_ = 0;
};

}  // namespace

int Milp::AddColumn(double lo, double hi, double cost, bool integer) {
  col_lo_.push_back(lo);
  col_hi_.push_back(hi);
  cost_.push_back(cost);
  integer_.push_back(integer ? 1 : 0);
  return num_columns() - 1;
}

void Milp::AddRow(double lo, double hi, const Terms& terms) {
  const int row = num_rows();
  for (const auto& [col, value] : terms) {
    if (value == 0) continue;
    row_index_.push_back(row);
    col_index_.push_back(col);
    values_.push_back(value);
  }
  row_lo_.push_back(lo);
  row_hi_.push_back(hi);
}

int Milp::num_integers() const { return static_cast<int>(std::count(integer_.begin(), integer_.end(), 1)); }

bool Milp::Satisfies(const std::vector<double>& x, double tolerance) const {
  if (static_cast<int>(x.size()) != num_columns()) return false;
  for (int c = 0; c < num_columns(); ++c) {
    if (x[c] < col_lo_[c] - tolerance || x[c] > col_hi_[c] + tolerance) return false;
    if (integer_[c] && std::abs(x[c] - std::round(x[c])) > tolerance) return false;
  }
  std::vector<double> activity(num_rows(), 0.0);
  for (size_t i = 0; i < values_.size(); ++i) activity[row_index_[i]] += values_[i] * x[col_index_[i]];
  for (int r = 0; r < num_rows(); ++r) {
    const double scale = std::max(1.0, std::abs(activity[r]));
    if (activity[r] < row_lo_[r] - tolerance * scale || activity[r] > row_hi_[r] + tolerance * scale) return false;
  }
  return true;
}

double Milp::Objective(const std::vector<double>& x) const {
  double sum = 0;
  for (int c = 0; c < num_columns(); ++c) sum += cost_[c] * x[c];
  return sum;
}

std::string MilpResult::Summary() const {
  std::string what = proven_optimal      ? "optimal"
                     : proven_infeasible ? "infeasible"
                     : has_solution      ? "stopped with"
                                         : "stopped without a solution";
  std::string s = absl::StrCat("cbc: ", what);
  if (has_solution) absl::StrAppendFormat(&s, " %.6g", objective);
  if (!proven_infeasible && std::isfinite(bound)) absl::StrAppendFormat(&s, " (bound %.6g)", bound);
  if (!proven_infeasible && !std::isfinite(bound))
    absl::StrAppend(&s, " (no bound: the budget ran out in the root LP)");
  absl::StrAppendFormat(&s, ", %d nodes, %.2f s", nodes, seconds);
  if (!start_accepted) absl::StrAppend(&s, ", no warm start");
  return s;
}

namespace {

// The cut generators of CBC's standalone solver at its default settings; they live as long as the search.
struct CbcCuts {
  CglProbing probing;
  CglGomory gomory;
  CglKnapsackCover knapsack;
  CglClique clique;
  CglMixedIntegerRounding2 mir;
  CglFlowCover flow;
  CglTwomir twomir;

  void AddTo(CbcModel& model) {
    probing.setUsingObjective(1);
    probing.setMaxPass(1);
    probing.setMaxPassRoot(5);
    probing.setMaxProbe(10);
    probing.setMaxProbeRoot(1000);
    probing.setMaxLook(50);
    probing.setMaxLookRoot(500);
    probing.setMaxElements(200);
    probing.setRowCuts(3);
    gomory.setLimit(300);
    clique.setStarCliqueReport(false);
    clique.setRowCliqueReport(false);
    model.addCutGenerator(&probing, -1, "Probing");
    model.addCutGenerator(&gomory, -99, "Gomory");
    model.addCutGenerator(&knapsack, -99, "Knapsack");
    model.addCutGenerator(&clique, -98, "Clique");
    model.addCutGenerator(&mir, -99, "MixedIntegerRounding2");
    model.addCutGenerator(&flow, -99, "FlowCover");
    model.addCutGenerator(&twomir, -99, "TwoMirCuts");
  }
};

// Primal heuristics; the feasibility pump only without a warm start (it finds a first solution and nothing
// better).
struct CbcHeuristics {
  CbcRounding rounding;
  CbcHeuristicLocal local;
  CbcHeuristicRINS rins;
  CbcHeuristicFPump pump;

  explicit CbcHeuristics(CbcModel& model) : rounding(model), local(model), rins(model), pump(model) {}
  void AddTo(CbcModel& model, bool warm) {
    model.addHeuristic(&rounding);
    model.addHeuristic(&local);
    model.addHeuristic(&rins);
    if (!warm) model.addHeuristic(&pump);
  }
};

// CBC quiet, on wall-clock time, stopping a little before the budget so that it winds down in order before the
// LPs are cut short. Branching stays at CBC's default (strong branching on 5 candidates until pseudo-costs are
// trusted): it proves the 117-unit bert_l-3 split optimal in seconds where pure pseudo-costs do not in a minute.
void ConfigureCbc(CbcModel& model, const StopState& state) {
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  model.solver()->messageHandler()->setLogLevel(0);
  model.setUseElapsedTime(true);
  const double seconds = absl::ToDoubleSeconds(state.budget.deadline - absl::Now());
  model.setMaximumSeconds(std::max(0.9 * seconds, 0.0));
}

// The incumbent (when it satisfies every row), the proofs and the bound, after the search.
void ReadResult(const CbcModel& model, const Milp& milp, StopState& state, MilpResult* result) {
  result->nodes = model.getNodeCount();
  if (model.bestSolution() != nullptr) {
    std::vector<double> x(model.bestSolution(), model.bestSolution() + milp.num_columns());
    if (milp.Satisfies(x, 1e-5)) {
      result->has_solution = true;
      result->solution = std::move(x);
      result->objective = milp.Objective(result->solution);
    }
  }
  if (!state.fired) {
    result->proven_optimal = result->has_solution && model.isProvenOptimal();
    result->proven_infeasible = !result->has_solution && model.isProvenInfeasible();
    state.bound = std::max(state.bound, model.getBestPossibleObjValue());
  }
  result->stopped = !result->proven_optimal && !result->proven_infeasible;
  result->bound = result->proven_optimal ? result->objective : state.bound;
  if (result->has_solution) result->bound = std::min(result->bound, result->objective);
}

}  // namespace

struct MilpSolver {
  static void LoadProblem(const Milp& milp, OsiClpSolverInterface& solver) {
    solver.messageHandler()->setLogLevel(0);
    CoinPackedMatrix matrix(/*colordered=*/false, milp.row_index_.data(), milp.col_index_.data(), milp.values_.data(),
                            static_cast<CoinBigIndex>(milp.values_.size()));
    matrix.setDimensions(milp.num_rows(), milp.num_columns());
    solver.loadProblem(matrix, milp.col_lo_.data(), milp.col_hi_.data(), milp.cost_.data(), milp.row_lo_.data(),
                       milp.row_hi_.data());
    for (int c = 0; c < milp.num_columns(); ++c) {
      if (milp.integer_[c]) solver.setInteger(c);
    }
  }

  static MilpResult Solve(const Milp& milp, const MilpOptions& options, const Budget& budget) {
    MilpResult result;
    const absl::Time began = absl::Now();
    auto state = std::make_shared<StopState>();
    state->budget = budget;
    if (options.max_seconds < absl::ToDoubleSeconds(budget.deadline - began)) {
      state->budget.deadline = began + absl::Seconds(std::max(options.max_seconds, 0.0));
    }
    OsiClpSolverInterface solver;
    LoadProblem(milp, solver);
    LpEvents lp_events(state);
    solver.getModelPtr()->passInEventHandler(&lp_events);
    // The root LP: its value is a bound that survives whatever happens later.
    solver.initialSolve();
    if (!state->fired && solver.isProvenOptimal()) state->bound = solver.getObjValue();
    if (!state->fired && solver.isProvenPrimalInfeasible()) {
      result.proven_infeasible = true;
      result.seconds = absl::ToDoubleSeconds(absl::Now() - began);
      return result;
    }
    CbcModel model(solver);
    ConfigureCbc(model, *state);
    NodeEvents node_events(state);
    model.passInEventHandler(&node_events);
    CbcCuts cuts;
    cuts.AddTo(model);
    const bool warm = options.start != nullptr && milp.Satisfies(*options.start);
    CbcHeuristics heuristics(model);
    heuristics.AddTo(model, warm);
    if (warm) {  // checked against every row above, so CBC need not check it again
      model.setBestSolution(options.start->data(), milp.num_columns(), milp.Objective(*options.start), /*check=*/false);
      result.start_accepted = model.bestSolution() != nullptr;
    }
    if (!state->budget.Expired()) model.branchAndBound();
    result.seconds = absl::ToDoubleSeconds(absl::Now() - began);
    ReadResult(model, milp, *state, &result);
    return result;
  }
};

MilpResult SolveMilp(const Milp& milp, const MilpOptions& options, const Budget& budget) {
  return MilpSolver::Solve(milp, options, budget);
}

}  // namespace placement::ilp

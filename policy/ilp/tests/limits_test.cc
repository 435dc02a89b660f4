// The ILP placers' contract at its edges: memory that cannot fit, budgets that run out or are cancelled,
// graphs too large for the latency model, objectives they do not optimize, and registration.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "graph/tarnawski.h"
#include "policy/ilp/latency_ilp.h"
#include "policy/ilp/tests/ilp_test_util.h"
#include "policy/ilp/throughput_ilp.h"

namespace placement::ilp::testing {
namespace {

OpSpec Op(const std::string& name, double seconds, int64_t params, int64_t output_bytes, double transfer) {
  OpSpec op;
  op.name = name;
  op.op_type = "test";
  op.measured_seconds = {{"a", seconds}};
  op.param_bytes = params;
  op.outputs.push_back(OutputTensor{output_bytes, transfer});
  return op;
}

// a -> b, a -> c, b -> d, c -> d with the given parameter bytes each.
Graph Diamond(int64_t params, int64_t output_bytes = 1, double transfer = 1.0) {
  GraphBuilder b;
  for (const char* name : {"a", "b", "c", "d"}) b.AddOp(Op(name, 2.0, params, output_bytes, transfer));
  b.AddEdge("a", 0, "b");
  b.AddEdge("a", 0, "c");
  b.AddEdge("b", 0, "d");
  b.AddEdge("c", 0, "d");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// A layered DAG big enough that no solver finishes quickly: `layers` x `width` operators.
Graph Layered(int layers, int width) {
  GraphBuilder b;
  for (int l = 0; l < layers; ++l) {
    for (int i = 0; i < width; ++i) {
      b.AddOp(Op(absl::StrCat("n", l, "_", i), 1.0 + (l * 7 + i * 3) % 5, 1, 1, 0.5 + (l + i) % 3));
      if (l > 0) {
        b.AddEdge((l - 1) * width + i, 0, l * width + i);
        b.AddEdge((l - 1) * width + (i + 1) % width, 0, l * width + i);
      }
    }
  }
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(IlpLimits, MemoryThatCannotFitIsFailedPrecondition) {
  // One operator larger than any device; more than the cluster in total; and a packing that fails although
  // each operator fits and the total does: four of 60 bytes on three devices of 100.
  struct Case {
    int64_t params;
    int64_t capacity;
    int devices;
    const char* says;
  };
  for (const Case& c :
       {Case{150, 100, 3, "operator 'a'"}, Case{90, 100, 3, "the graph needs"}, Case{60, 100, 3, "memory"}}) {
    SCOPED_TRACE(c.says);
    const Graph g = Diamond(c.params);
    const Topology t = Cluster(std::vector<DeviceSpec>(c.devices, DeviceSpec{"a", c.capacity}));
    const CostModel costs = Costs(g, t);
    for (auto [placer, objective] :
         {std::pair{"ilp_throughput", Objective::kThroughput}, std::pair{"ilp_latency", Objective::kLatency}}) {
      absl::StatusOr<PlacerResult> r = RunPlacer(placer, costs, objective);
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << placer << ": " << r.status();
      if (std::string(placer) == "ilp_throughput") {
        EXPECT_TRUE(absl::StrContains(r.status().message(), c.says)) << r.status();
      }
    }
  }
}

TEST(IlpLimits, LatencyFallsBackToChargingEveryBufferWhenActivationsOverflow) {
  // a -> b, a -> c with an 80-byte output of a and slow transfers: by parameters alone (15 bytes) all three
  // belong on one device, but there a's output overflows 90 bytes. Charging every buffer spreads them.
  GraphBuilder b;
  b.AddOp(Op("a", 2.0, 5, 80, 3.0));
  b.AddOp(Op("b", 2.0, 5, 1, 3.0));
  b.AddOp(Op("c", 2.0, 5, 1, 3.0));
  b.AddEdge("a", 0, "b");
  b.AddEdge("a", 0, "c");
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  const Topology t = Cluster(std::vector<DeviceSpec>(3, DeviceSpec{"a", 90}));
  const CostModel costs = Costs(*g, t);
  absl::StatusOr<PlacerResult> r = RunPlacer("ilp_latency", costs, Objective::kLatency);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string notes = absl::StrJoin(r->notes, "\n");
  EXPECT_TRUE(r->evaluation.fits_memory) << notes;
  EXPECT_TRUE(absl::StrContains(notes, "all-buffers model")) << notes;
  // The model runs b and c elsewhere one transfer after a (7); the simulator queues both transfers on a's
  // outgoing link (10). The bound is the parameter model's optimum, all on one device.
  EXPECT_TRUE(absl::StrContains(notes, "all-buffers model: makespan 7")) << notes;
  EXPECT_DOUBLE_EQ(r->evaluation.value, 10.0) << notes;
  EXPECT_DOUBLE_EQ(r->best_bound, 6.0) << notes;
  EXPECT_FALSE(r->proven_optimal);
}

TEST(IlpLimits, AnExpiredOrCancelledBudgetStopsAtOnce) {
  const Graph g = Diamond(1);
  const Topology t = Cluster({{"a"}, {"a"}});
  const CostModel costs = Costs(g, t);
  std::atomic<bool> cancelled{true};
  for (const char* placer : {"ilp_throughput", "ilp_latency"}) {
    const Objective objective = std::string(placer) == "ilp_throughput" ? Objective::kThroughput : Objective::kLatency;
    absl::StatusOr<PlacerResult> late = RunPlacer(placer, costs, objective, Budget{absl::Now() - absl::Seconds(1)});
    EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << placer << ": " << late.status();
    absl::StatusOr<PlacerResult> off = RunPlacer(placer, costs, objective, Budget{absl::InfiniteFuture(), &cancelled});
    EXPECT_EQ(off.status().code(), absl::StatusCode::kCancelled) << placer << ": " << off.status();
  }
}

// Building the model is our code, which AddressSanitizer slows several times; CBC's own search is not
// instrumented. The allowance past the budget grows accordingly.
#if defined(__SANITIZE_ADDRESS__)
constexpr absl::Duration kOverrun = absl::Seconds(3);
#else
constexpr absl::Duration kOverrun = absl::Milliseconds(500);
#endif

TEST(IlpLimits, ThroughputHonoursTheDeadlineOnALargeGraph) {
  const Graph g = Layered(60, 10);  // 600 operators
  const Topology t = Cluster(std::vector<DeviceSpec>(6, DeviceSpec{"a"}));
  const CostModel costs = Costs(g, t);
  for (absl::Duration budget : {absl::Milliseconds(5), absl::Milliseconds(300), absl::Seconds(2)}) {
    SCOPED_TRACE(absl::FormatDuration(budget));
    const absl::Time start = absl::Now();
    absl::StatusOr<PlacerResult> r = RunPlacer("ilp_throughput", costs, Objective::kThroughput, Budget::For(budget));
    const absl::Duration took = absl::Now() - start;
    // The warm start, or nothing at all when even that did not fit in the budget.
    if (r.ok()) {
      EXPECT_TRUE(ValidatePlacement(costs, r->placement).ok());
      EXPECT_FALSE(r->proven_optimal);
      EXPECT_LE(r->best_bound, r->evaluation.value + 1e-9);
    } else {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
    }
    EXPECT_LT(took, budget * 1.2 + kOverrun);
  }
}

TEST(IlpLimits, LatencyRejectsGraphsOverItsLimitAndOtherObjectivesAreRejected) {
  const Graph big = Layered(7, 10);  // 70 operators
  const Topology t = Cluster({{"a"}, {"a"}});
  const CostModel costs = Costs(big, t);
  absl::StatusOr<PlacerResult> r = RunPlacer("ilp_latency", costs, Objective::kLatency);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "at most 60 operators")) << r.status();

  const Graph g = Diamond(1);
  const CostModel small = Costs(g, t);
  EXPECT_EQ(RunPlacer("ilp_throughput", small, Objective::kLatency).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunPlacer("ilp_latency", small, Objective::kThroughput).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<PlacerResult> step = RunPlacer("ilp_latency", small, Objective::kStepTime);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE(step->proven_optimal) << absl::StrJoin(step->notes, "\n");
}

}  // namespace
}  // namespace placement::ilp::testing

// `placectl place`: runs a placer (AUTO by default) on a graph and cluster in-process and reports its answer;
// `placectl algorithms`: lists the placers this build has.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/graph_loader.h"
#include "policy/parallel/batch_split.h"

namespace placement {
class PlacerRegistry;
}

namespace placement::cli {

// What plans of data-parallel stages take (--parallelism, --schedule, --global_batch; their cost model is the
// command's --cost_model): names as
// policy/parallel/hybrid_placer.h's SetPlanOptions reads them.
// "" chooses: auto for a training step on more than one device, operator otherwise. auto compares data,
// pipeline and hybrid plans and operator placement at the global batch (GraphLoadOptions.batch, in samples; the
// graph is bound to the micro-batch) and answers the fastest that fits; the others take global_batch micro-batches.
struct PlanOptions {
  std::string parallelism;
  std::string schedule = "1f1b";
  int64_t global_batch = 0;
  std::string sharding = "none";   // none | zero1 | zero2 | zero3 | fsdp
  std::string recompute = "none";  // none | full
  int64_t micro_batch = 0;  // auto: samples per micro-batch, a divisor of the global batch; 0: batch / devices
};

struct PlaceOptions {
  std::string graph_path;
  GraphLoadOptions load;
  std::string topology_file;
  std::string devices;
  std::string algorithm = "auto";
  std::string objective;  // "": step_time, or throughput for parallelism auto
  // default | tarnawski (LATENCY as Tarnawski et al. define it) | pipedream (plans, PipeDream's formulas)
  std::string cost_model = "default";
  std::string deadline = "10s";  // absl::ParseDuration syntax: 500ms, 2s, 1m
  std::string output = "table";  // table | json
  uint64_t seed = 1;
  std::string chart_path;  // when set, the answer's schedule chart (HTML) is written there
  PlanOptions plan;
  // When the command began (before loading a policy or a graph): the deadline counts from here. InfinitePast:
  // from RunPlace's start.
  absl::Time started = absl::InfinitePast();
  const PlacerRegistry* registry = nullptr;  // DefaultPlacerRegistry() when null (placectl adds the learned policy)
};

// The rendered report: the simulate report plus the algorithm, whether it proved optimality, its bound and its
// notes; the JSON form is a placement file `placectl simulate --placement` reads. Errors: INVALID_ARGUMENT for
// options (an unknown cost model, one that does not score the objective, an algorithm that does not optimize
// the objective under it), NOT_FOUND naming the known algorithms, FAILED_PRECONDITION when nothing fits memory,
// DEADLINE_EXCEEDED when the deadline passes before an answer.
absl::StatusOr<std::string> RunPlace(const PlaceOptions& options);

// --deadline's value: a positive absl duration (500ms, 2s, 1m); a usage error naming the flag otherwise.
absl::StatusOr<absl::Duration> ParseDeadline(const std::string& text);

// One line per placer: name, the objectives it optimizes, its description.
std::string ListAlgorithms(const PlacerRegistry* registry = nullptr);

}  // namespace placement::cli

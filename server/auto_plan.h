// The default answer for a training step on several accelerators, as placectl gives it: the global batch (the
// request's options.batch_size, in samples) split into micro-batches, and data, pipeline and hybrid plans and
// operator placement compared per step at that batch (policy/auto/plan_portfolio.h). A request gets it by
// parallelism "auto", or by leaving the plan to the service: parallelism, algorithm, cost model, schedule and global
// batch unset, objective STEP_TIME, an ONNX model of a training step, a cluster of several accelerators.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "placement/v1/placement.pb.h"
#include "server/request_decoder.h"

namespace placement::server {

// The request as the plan it asks for (parallelism "hybrid", objective THROUGHPUT; its global batch is split once
// the graph is decoded, SplitGlobalBatchOf), or nullopt when it asks for something else. INVALID_ARGUMENT for
// parallelism "auto" with options it cannot take, naming them, and for micro_batch_size in a request that asks for
// something else (or negative).
absl::StatusOr<std::optional<placement::v1::PlaceRequest>> PlanRequestFor(const placement::v1::PlaceRequest& request);

// Sets `planned`'s global batch (micro-batches) and options.batch_size (the micro-batch) from `asked`'s global batch
// in samples and micro_batch_size (0: one micro-batch per accelerator) and the decoded graph (an export with its batch
// fixed runs micro-batches of that batch), and `note`: what the answer says of a fixed batch ("" when it binds).
// Returns whether the graph must be decoded again at the micro-batch.
absl::StatusOr<bool> SplitGlobalBatchOf(const placement::v1::PlaceRequest& asked, const DecodedInput& input,
                                        placement::v1::PlaceRequest& planned, std::string* note);

}  // namespace placement::server

// PipeDream's per-layer profiles (Narayanan et al., SOSP 2019) as a graph format: one line per layer,
//
//   nodeN -- Description -- forward_compute_time=ms, backward_compute_time=ms, activation_size=bytes,
//            parameter_size=bytes
//
// then the edges, each on a line of its own starting with a tab: `\tnodeA -- nodeB`. The times were measured on
// one GPU, and a plan runs every layer at them on any worker: each operator gets that time for every device
// kind ("*"). As an inference graph a layer is one operator at its forward time; as a training step (the form
// PipeDream plans) a layer also has a backward operator at its measured backward time, colocated with it, and
// the gradients flow back along the edges reversed, each the size of the activation it is the gradient of. No
// optimizer operators: the profiles do not time the update. Input layers (sources named "Input...") time loading
// the data and "__getitem__" layers that feed nothing select an unread output: both are left out, as PipeDream's
// planner leaves them out; a figure given as a list ("[a; b]", a layer
// with several outputs) counts as their sum, as there.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/problem.h"

namespace placement {

// True when the text starts (after blank lines) with a PipeDream layer line.
bool LooksLikePipeDreamProfile(absl::string_view text);

// Operators named after the layers ("node4"), op types from the description's first word ("Conv2d"); a
// backward operator is "<layer>/grad" of type "<type>Grad". INVALID_ARGUMENT names the line of a malformed
// layer or edge, an edge to a layer not listed, a negative or non-finite figure, a layer listed twice.
absl::StatusOr<Problem> ParsePipeDreamProfile(absl::string_view text, bool training);

}  // namespace placement

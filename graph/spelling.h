// The nearest known spelling of a mistyped name, for errors that suggest one ("did you mean --devices?").
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement {

// Edits (insertions, deletions, substitutions) that turn a into b.
size_t EditDistance(absl::string_view a, absl::string_view b);

// The candidate closest to `name` within a third of its length (at least two edits); else the one candidate that is
// a beginning of `name` or begins with it (of three letters or more: "batchsize" -> "batch"); else "".
std::string NearestSpelling(absl::string_view name, const std::vector<std::string>& candidates);

}  // namespace placement

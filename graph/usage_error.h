// An error in what a caller asked for (a flag's value, an option naming something the input lacks), as opposed to
// an error in the input it reads: placectl exits 2 for the first and 3 for the second, though both are
// INVALID_ARGUMENT. The mark travels as a payload, so the libraries that check options (the ONNX importer's --dim)
// and the command line agree without one knowing the other.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"

namespace placement {

inline constexpr char kUsagePayload[] = "type.placement/usage";

inline absl::Status AsUsageError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

inline absl::Status UsageError(absl::string_view message) { return AsUsageError(absl::InvalidArgumentError(message)); }

inline bool IsUsageError(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kUsagePayload).has_value();
}

}  // namespace placement

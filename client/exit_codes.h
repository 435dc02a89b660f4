// placectl's exit codes, by failure class, so scripts can tell a typo from a bad file from a broken build.
#pragma once

#include "absl/status/status.h"
#include "graph/usage_error.h"  // AsUsageError, UsageError: the command line's own mistakes

namespace placement::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,     // a bug or an unexpected failure
  kExitUsage = 2,        // wrong command line
  kExitBadInput = 3,     // a graph, topology, placement or weights file that is missing, wrong or corrupt
  kExitInfeasible = 4,   // the request is well-formed but cannot be met (memory, deadline, a server limit)
  kExitUnavailable = 5,  // the server cannot be reached, is starting or stopping: worth retrying
  kExitDenied = 6,       // the server refused who we are: a missing or wrong token, or certificate
};

inline int ExitCodeFor(const absl::Status& status) {
  if (IsUsageError(status)) return kExitUsage;
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kDataLoss:  // a corrupt file (weights, a graph)
    case absl::StatusCode::kOutOfRange:
      return kExitBadInput;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitInfeasible;
    case absl::StatusCode::kUnavailable:
      return kExitUnavailable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    default:
      return kExitInternal;
  }
}

}  // namespace placement::cli

// The status plumbing every library uses, so that a function reads as its steps:
//   RETURN_IF_ERROR(CheckSomething(x));
//   ASSIGN_OR_RETURN(Graph graph, BuildGraph(spec));
// Both return the failing status unchanged, as an absl::Status (and so into any StatusOr).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PLACEMENT_STATUS_CONCAT_INNER(a, b) a##b
#define PLACEMENT_STATUS_CONCAT(a, b) PLACEMENT_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                                                 \
  do {                                                                        \
    if (::absl::Status placement_status_ = (expr); !placement_status_.ok()) { \
      return placement_status_;                                               \
    }                                                                         \
  } while (false)

#define PLACEMENT_ASSIGN_OR_RETURN_IMPL(result, lhs, rexpr) \
  auto result = (rexpr);                                    \
  if (!result.ok()) return std::move(result).status();      \
  lhs = *std::move(result)

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  PLACEMENT_ASSIGN_OR_RETURN_IMPL(PLACEMENT_STATUS_CONCAT(placement_statusor_, __LINE__), lhs, rexpr)

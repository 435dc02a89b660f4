// RETURN_IF_ERROR and ASSIGN_OR_RETURN pass a failure on unchanged and go on with a success's value.
#include "graph/status_macros.h"

#include <memory>

#include <gtest/gtest.h>

namespace placement {
namespace {

absl::StatusOr<std::unique_ptr<int>> Make(int v) {
  if (v < 0) return absl::InvalidArgumentError("negative");
  return std::make_unique<int>(v);
}

absl::StatusOr<int> Twice(int v) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> p, Make(v));  // a move-only value
  RETURN_IF_ERROR(*p == 7 ? absl::NotFoundError("seven") : absl::OkStatus());
  return 2 * *p;
}

TEST(StatusMacros, PassFailuresOnAndValuesThrough) {
  EXPECT_EQ(*Twice(3), 6);
  EXPECT_EQ(Twice(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Twice(-1).status().message(), "negative");
  EXPECT_EQ(Twice(7).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace placement

// absl::Status to grpc::Status: codes kept, messages kept but bounded.
#include "server/status_mapping.h"

#include <string>

#include <gtest/gtest.h>

namespace placement::server {
namespace {

TEST(StatusMapping, KeepsCodesAndMessages) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const struct {
    absl::Status in;
    grpc::StatusCode out;
  } cases[] = {
      {absl::InvalidArgumentError("bad node 'x'"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::ResourceExhaustedError("limit"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::FailedPreconditionError("memory"), grpc::StatusCode::FAILED_PRECONDITION},
      {absl::DeadlineExceededError("late"), grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::CancelledError("gone"), grpc::StatusCode::CANCELLED},
      {absl::UnavailableError("starting"), grpc::StatusCode::UNAVAILABLE},
      {absl::NotFoundError("x"), grpc::StatusCode::NOT_FOUND},
      {absl::InternalError("x"), grpc::StatusCode::INTERNAL},
  };
  for (const auto& c : cases) {
    const grpc::Status s = ToGrpcStatus(c.in);
    EXPECT_EQ(s.error_code(), c.out) << c.in;
    EXPECT_EQ(s.error_message(), std::string(c.in.message()));
    EXPECT_EQ(FromGrpcStatus(s), c.in);
  }
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
}

TEST(StatusMapping, BoundsLongMessagesOnACharacterBoundary) {
  std::string message(kMaxStatusMessageBytes - 1, 'a');
  message += "\xC3\xA9";  // a two-byte character across the limit
  message += std::string(5000, 'b');
  const grpc::Status s = ToGrpcStatus(absl::InvalidArgumentError(message));
  EXPECT_LT(s.error_message().size(), kMaxStatusMessageBytes + 64);
  EXPECT_EQ(s.error_message().substr(0, kMaxStatusMessageBytes - 1), std::string(kMaxStatusMessageBytes - 1, 'a'));
  EXPECT_NE(s.error_message().find("more bytes"), std::string::npos);
  EXPECT_EQ(s.error_message().find('\xC3'), std::string::npos);
}

}  // namespace
}  // namespace placement::server

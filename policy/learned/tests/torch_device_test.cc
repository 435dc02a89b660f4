#include "policy/learned/torch_device.h"

#include <gtest/gtest.h>

namespace placement::learned {
namespace {

TEST(TorchDevice, AutoPicksAWorkingDevice) {
  auto rt = SelectTorchDevice("auto");
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_TRUE(rt->device == "cpu" || rt->device.rfind("cuda", 0) == 0) << rt->device;
  EXPECT_FALSE(rt->torch_version.empty());
}

TEST(TorchDevice, CpuIsAlwaysAvailable) {
  auto rt = SelectTorchDevice("cpu");
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(rt->device, "cpu");
}

TEST(TorchDevice, AskingForCudaWhereThereIsNoneIsAnErrorNotAFallBack) {
  auto automatic = SelectTorchDevice("auto");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  auto cuda = SelectTorchDevice("cuda");
  if (automatic->device == "cpu") {
    ASSERT_FALSE(cuda.ok());
    EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
  } else {
    ASSERT_TRUE(cuda.ok()) << cuda.status();
    EXPECT_EQ(cuda->device, automatic->device);
  }
}

TEST(TorchDevice, UnknownPreferenceIsAnError) {
  auto rt = SelectTorchDevice("tpu");
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(rt.status().message().find("tpu"), std::string::npos);
}

}  // namespace
}  // namespace placement::learned

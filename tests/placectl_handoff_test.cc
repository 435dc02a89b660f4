// placectl hands the commands that need LibTorch to the placectl-torch beside it, with its build identity: a
// placectl-torch of another build (a stale copy beside a newer placectl) refuses the command and says why, rather
// than running other code.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/placectl_run.h"

namespace {

namespace fs = std::filesystem;
using placement::testing::RunPlacectl;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// A folder with a copy of placectl and, beside it, a placectl-torch that prints the identity it was handed.
class HandoffFolder {
 public:
  HandoffFolder() : dir_(fs::temp_directory_path() / ("placectl_handoff_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    fs::copy_file(PLACECTL_PATH, dir_ / "placectl", fs::copy_options::overwrite_existing);
    const fs::path torch = dir_ / "placectl-torch";
    std::ofstream(torch) << "#!/bin/sh\nprintf '%s' \"$PLACECTL_BUILD_IDENTITY\"\n";
    ::chmod(torch.c_str(), 0755);
  }
  ~HandoffFolder() { fs::remove_all(dir_); }
  std::string placectl() const { return (dir_ / "placectl").string(); }

 private:
  fs::path dir_;
};

TEST(PlacectlHandoff, PlacectlHandsItsBuildIdentityOver) {
  HandoffFolder folder;
  const auto handed = RunPlacectl("calibrate", folder.placectl());
  ASSERT_EQ(handed.exit_code, 0) << handed.err;
  EXPECT_THAT(handed.out, MatchesRegex("[0-9a-f]{16}"));
}

TEST(PlacectlHandoff, APlacectlTorchOfAnotherBuildRefusesTheCommand) {
  const auto other = RunPlacectl("algorithms", "PLACECTL_BUILD_IDENTITY=0123456789abcdef " PLACECTL_TORCH_PATH);
  EXPECT_EQ(other.exit_code, 4);
  EXPECT_THAT(other.err, HasSubstr("is from another build"));
  EXPECT_THAT(other.err, HasSubstr("0123456789abcdef"));
  EXPECT_THAT(other.err, HasSubstr("install placectl and placectl-torch from one build"));
  // The identity this build's placectl hands over is the one its placectl-torch takes.
  HandoffFolder folder;
  const std::string identity = RunPlacectl("calibrate", folder.placectl()).out;
  ASSERT_FALSE(identity.empty());
  const auto same =
      RunPlacectl("algorithms", "PLACECTL_BUILD_IDENTITY=" + identity + " " + std::string(PLACECTL_TORCH_PATH));
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(same.out, HasSubstr("policy"));
}

}  // namespace

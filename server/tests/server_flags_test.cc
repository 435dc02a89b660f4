// --config FILE becomes absl's --flagfile, placed first so that the command line wins over the file.
#include "server/server_flags.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace placement::server {
namespace {

std::vector<std::string> Expand(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<std::string> storage;
  std::vector<std::string> out;
  for (char* a : ExpandConfigFlag(static_cast<int>(argv.size()), argv.data(), &storage)) out.emplace_back(a);
  return out;
}

TEST(ServerFlags, ConfigBecomesALeadingFlagfile) {
  EXPECT_EQ(Expand({"server", "--threads=4", "--config=a.flags", "--listen", "x:1", "--config", "b.flags"}),
            (std::vector<std::string>{"server", "--flagfile=a.flags", "--flagfile=b.flags", "--threads=4", "--listen",
                                      "x:1"}));
  EXPECT_EQ(Expand({"server", "--", "--config=not-a-flag"}),
            (std::vector<std::string>{"server", "--", "--config=not-a-flag"}));
  EXPECT_EQ(Expand({"server"}), (std::vector<std::string>{"server"}));
}

}  // namespace
}  // namespace placement::server

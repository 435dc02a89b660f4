#include "policy/learned/weights_path.h"

#include <filesystem>
#include <vector>

namespace placement::learned {

std::string DefaultPolicyWeights() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates = {fs::path(kShippedWeights)};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path().parent_path() / "share" / "placement" / kShippedWeights);
  candidates.push_back(fs::path(PLACEMENT_SOURCE_DIR) / kShippedWeights);
  for (const fs::path& p : candidates) {
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return candidates.front().string();
}

}  // namespace placement::learned

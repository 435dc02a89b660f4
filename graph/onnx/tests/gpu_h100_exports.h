// The ONNX exports measured on an H100 (../shared/bench/gpu_h100), laid out for an import. They keep their weights
// in data files that are not stored: each GpuH100Exports gets a folder with a link to every model and a sparse data
// file of the size exports.tsv gives, as that folder's README shows.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "tests/support/shared_inputs.h"
#include "tests/support/temp_dir.h"

namespace placement::onnx_testing {

inline std::filesystem::path GpuH100Dir() { return test_support::SharedDir() / "bench" / "gpu_h100"; }

class GpuH100Exports {
 public:
  GpuH100Exports() {
    namespace fs = std::filesystem;
    std::ifstream in(GpuH100Dir() / "exports.tsv");
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f = absl::StrSplit(line, '\t');
      if (f.size() < 3 || f[0] == "file") continue;
      fs::create_symlink(GpuH100Dir() / f[0], fs::path(dir_.path()) / f[0]);
      std::ofstream(fs::path(dir_.path()) / f[1]).close();
      fs::resize_file(fs::path(dir_.path()) / f[1], std::stoull(f[2]));
      ++models_;
    }
  }
  int models() const { return models_; }
  std::filesystem::path Path(const std::string& file) const { return std::filesystem::path(dir_.path()) / file; }

 private:
  test_support::TempDir dir_;
  int models_ = 0;
};

}  // namespace placement::onnx_testing

#define SKIP_WITHOUT_GPU_H100_EXPORTS()                                                                       \
  if (!std::filesystem::exists(::placement::onnx_testing::GpuH100Dir() / "exports.tsv")) {                    \
    GTEST_SKIP() << "needs ../shared/bench/gpu_h100 (the BERT and vision ONNX exports measured on an H100), " \
                    "absent at "                                                                              \
                 << ::placement::onnx_testing::GpuH100Dir();                                                  \
  }

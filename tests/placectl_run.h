// Runs the placectl binary (PLACECTL_PATH) as a user would, with its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace placement::testing {

struct PlacectlResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `binary` is placectl unless given (a copy elsewhere, say).
inline PlacectlResult RunPlacectl(const std::string& args, const std::string& binary = PLACECTL_PATH) {
  const std::filesystem::path err =
      std::filesystem::temp_directory_path() / ("placectl_err_" + std::to_string(::getpid()));
  const std::string cmd = binary + " " + args + " 2>" + err.string();
  PlacectlResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = Slurp(err);
  std::filesystem::remove(err);
  return r;
}

}  // namespace placement::testing

// Runs the placectl binary (PLACECTL_PATH) as a user would, with its exit code, stdout and stderr. Every run that
// asks for --output json and succeeds is checked to print JSON alone: a program reading placectl's stdout has no way
// to skip a stray line.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

// Whether the command line asks for --output json (either spelling); its words are split on spaces, as the shell
// splits the tests' command lines.
inline bool AsksForJson(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--output=json" || (words[i] == "--output" && i + 1 < words.size() && words[i + 1] == "json")) {
      return true;
    }
  }
  return false;
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
  if (r.exit_code == 0 && AsksForJson(args) && !nlohmann::json::accept(r.out)) {
    ADD_FAILURE() << "placectl " << args
                  << " asked for --output json and printed what is not JSON alone: " << r.out.substr(0, 200);
  }
  return r;
}

}  // namespace placement::testing

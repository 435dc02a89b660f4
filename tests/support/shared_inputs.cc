#include "tests/support/shared_inputs.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace placement::test_support {
namespace {

double Figure(const std::vector<std::string>& fields, size_t i) {
  double v = -1;
  if (i >= fields.size() || fields[i].empty() || !absl::SimpleAtod(fields[i], &v)) return -1;
  return v;
}

}  // namespace

std::filesystem::path SharedDir() { return std::filesystem::path(PLACEMENT_SHARED_DIR); }
std::filesystem::path TarnawskiDir() { return SharedDir() / "bench" / "tarnawski"; }

std::string ReadFileToString(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<TarnawskiReference> ReadTarnawskiReference(const std::filesystem::path& dir) {
  std::vector<TarnawskiReference> rows;
  for (absl::string_view line : absl::StrSplit(ReadFileToString(dir / "reference.tsv"), '\n')) {
    if (line.empty() || line[0] == '#' || absl::StartsWith(line, "input")) continue;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    TarnawskiReference r;
    r.input = f[0];
    if (f.size() < 2 || !absl::SimpleAtoi(f[1], &r.k)) continue;
    r.dp_optimal = Figure(f, 2);
    r.dp_seconds = Figure(f, 3);
    r.dp_peak_mb = Figure(f, 4);
    r.expert = Figure(f, 5);
    r.scotch = Figure(f, 6);
    r.one_device = Figure(f, 7);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::filesystem::path PipeDreamDir() { return SharedDir() / "bench" / "pipedream"; }

std::vector<PipeDreamReference> ReadPipeDreamReference(const std::filesystem::path& dir) {
  std::vector<PipeDreamReference> rows;
  for (absl::string_view line : absl::StrSplit(ReadFileToString(dir / "reference.tsv"), '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    PipeDreamReference r;
    if (f.size() < 6 || !absl::SimpleAtod(f[3], &r.time_per_stage)) continue;
    r.model = f[0];
    r.topology = f[1];
    r.mode = f[2];
    r.replicas = f[5];
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace placement::test_support

#include "tests/support/latency_inputs.h"

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/support/shared_inputs.h"

namespace placement::test_support {
namespace {

constexpr double kTwoGiB = 2147483648.0;

struct Derivation {
  const char* name;
  const char* file;  // below TarnawskiDir()
  double cost_scale;
  double memory;  // 0: keep
  int k;
  int cpus;  // 0: keep
};

constexpr Derivation kDerived[] = {
    {"LayerGraphs/inceptionv3_inference", "throughput-inputs/LayerGraphs/inceptionv3_inference.json", 1000, kTwoGiB, 12,
     8},
    {"LayerGraphs/resnet50_inference", "throughput-inputs/LayerGraphs/resnet50_inference.json", 1000, kTwoGiB, 14, 8},
    {"LayerGraphs/gnmt_inference k=3", "latency-inputs/LayerGraphs/gnmt_inference.json", 1, 0, 3, 0},
    {"OperatorGraphs/bert_l-3_inference k=2", "latency-inputs/OperatorGraphs/bert_l-3_inference.json", 1, 0, 2, 0},
};

std::string Derive(const std::string& text, const Derivation& d) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return "";
  for (auto& e : doc["edges"]) e["cost"] = e["cost"].get<double>() * d.cost_scale;
  if (d.memory > 0) doc["maxSizePerFPGA"] = d.memory;
  doc["maxFPGAs"] = d.k;
  if (d.cpus > 0) doc["maxCPUs"] = d.cpus;
  return doc.dump();
}

std::string Stem(const std::string& path) {
  std::string s = path;
  if (absl::StartsWith(s, "latency-inputs/")) s = s.substr(sizeof("latency-inputs/") - 1);
  if (absl::EndsWith(s, ".json")) s.resize(s.size() - 5);
  return s;
}

}  // namespace

std::vector<LatencyInput> TarnawskiLatencyInputs() {
  std::vector<LatencyInput> inputs;
  const std::filesystem::path dir = TarnawskiDir();
  for (absl::string_view line : absl::StrSplit(ReadFileToString(dir / "latency-reference.tsv"), '\n')) {
    if (line.empty() || line[0] == '#' || absl::StartsWith(line, "input")) continue;
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    LatencyInput in;
    if (f.size() < 3 || !absl::SimpleAtoi(f[1], &in.k) || !absl::SimpleAtod(f[2], &in.published_greedy)) continue;
    in.name = Stem(f[0]);
    in.origin = f[0];
    in.json = ReadFileToString(dir / f[0]);
    if (!in.json.empty()) inputs.push_back(std::move(in));
  }
  for (const Derivation& d : kDerived) {
    const std::string text = ReadFileToString(dir / d.file);
    if (text.empty()) continue;
    LatencyInput in;
    in.name = d.name;
    in.origin = absl::StrCat(d.file, d.cost_scale != 1 ? absl::StrCat(", edge costs x ", d.cost_scale) : "",
                             d.memory > 0 ? ", 2 GiB per accelerator" : "", ", ", d.k, " accelerators");
    in.json = Derive(text, d);
    in.k = d.k;
    if (!in.json.empty()) inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace placement::test_support

// Real models people export, through the whole path: every file of tests/data/onnx_coverage (MANIFEST.tsv says
// what each exercises) imports, as an inference graph and as a training step, and places on four A100s with
// a simulated step time; only models whose sizes depend on the data warn, and every warning states an assumption.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "graph/cost_model.h"
#include "graph/onnx/onnx_import.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "policy/placer_families.h"

namespace placement {
namespace {

const std::string kDir = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/onnx_coverage/";

struct Entry {
  std::string file;
  std::map<std::string, int64_t> dims;
  bool data_dependent = false;  // sizes the data decides: the import must say what it assumed
};

std::vector<Entry> Manifest() {
  std::ifstream in(kDir + "MANIFEST.tsv");
  std::vector<Entry> entries;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cols = absl::StrSplit(line, '\t');
    if (cols.size() < 4) continue;
    Entry e{cols[0], {}, cols[2].find('=') != std::string::npos};
    for (absl::string_view item : absl::StrSplit(cols[2], ',', absl::SkipEmpty())) {
      std::vector<std::string> kv = absl::StrSplit(item, '=');
      int64_t v = 0;
      if (kv.size() == 2 && absl::SimpleAtoi(kv[1], &v)) e.dims[kv[0]] = v;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

class OnnxCoverage : public ::testing::TestWithParam<Entry> {};

TEST_P(OnnxCoverage, ImportsAndPlacesForInferenceAndTraining) {
  const Entry& e = GetParam();
  OnnxImportOptions options;
  options.dims = e.dims;
  absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(kDir + e.file, options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  for (const std::string& w : imported->warnings) {
    EXPECT_THAT(w,
                ::testing::AnyOf(::testing::HasSubstr("depends on the data"), ::testing::HasSubstr("assumed"),
                                 ::testing::HasSubstr("imported as written"),
                                 ::testing::HasSubstr("the larger sizes are taken"), ::testing::HasSubstr("costlier")))
        << e.file;
  }
  if (!e.data_dependent) {
    for (const std::string& w : imported->warnings)
      EXPECT_THAT(w, ::testing::Not(::testing::HasSubstr("depends on the data")));
  }
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("4xA100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  absl::StatusOr<Graph> training = BuildTrainingGraph(imported->problem.graph);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_GT(training->num_ops(), imported->problem.graph.num_ops());
  for (const Graph* g : {&imported->problem.graph, &*training}) {
    absl::StatusOr<CostModel> costs = CostModel::Create(*g, *topology);
    ASSERT_TRUE(costs.ok()) << costs.status();
    absl::StatusOr<const Placer*> heft = DefaultPlacerRegistry().Find("heft");
    ASSERT_TRUE(heft.ok());
    PlacementProblem problem;
    problem.costs = &*costs;
    absl::StatusOr<PlacerResult> placed = (*heft)->Place(problem, Budget::For(absl::Minutes(5)));
    ASSERT_TRUE(placed.ok()) << e.file << ": " << placed.status();
    EXPECT_GT(placed->evaluation.value, 0) << e.file;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, OnnxCoverage, ::testing::ValuesIn(Manifest()),
                         [](const ::testing::TestParamInfo<Entry>& info) {
                           std::string name = info.param.file.substr(0, info.param.file.find('.'));
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(OnnxCoverageManifest, ListsEveryFileInTheFolder) {
  std::set<std::string> listed;
  for (const Entry& e : Manifest()) listed.insert(e.file);
  std::set<std::string> present;
  for (const auto& f : std::filesystem::directory_iterator(kDir)) {
    if (f.path().extension() == ".onnx") present.insert(f.path().filename().string());
  }
  EXPECT_EQ(listed, present);
  EXPECT_GE(listed.size(), 9u);
}

}  // namespace
}  // namespace placement

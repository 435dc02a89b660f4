// The committed corpus of real models (tests/data/corpus, made by scripts/export_corpus.py): each imports,
// and its multiply-accumulates and parameters agree with the figures torchvision publishes.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "absl/strings/str_split.h"
#include "graph/canonical.h"
#include "graph/cost_model.h"
#include "graph/onnx/onnx_import.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

const std::string kCorpus = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus";

struct ManifestRow {
  std::string file;
  int64_t parameters = 0;  // sum of p.numel() over the torch model's parameters
  int64_t buffers = 0;     // BatchNorm running statistics, also exported as inputs
  int32_t nodes = 0;
};

std::vector<ManifestRow> ReadManifest() {
  std::ifstream in(kCorpus + "/MANIFEST.tsv");
  std::vector<ManifestRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("file\t", 0) == 0) continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 6) continue;
    rows.push_back({f[0], std::stoll(f[3]), std::stoll(f[4]), std::stoi(f[5])});
  }
  return rows;
}

OnnxImportResult Import(const std::string& file, OnnxImportOptions options = {}) {
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(kCorpus + "/" + file, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : OnnxImportResult{};
}

// Elements of every graph input with a fully static shape plus every initializer: the weights of a model
// exported without its parameters, counted straight from the file.
int64_t WeightElementsInFile(const std::string& file) {
  std::ifstream in(kCorpus + "/" + file, std::ios::binary);
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&in)) << file;
  int64_t total = 0;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    int64_t n = 1;
    for (const auto& dim : input.type().tensor_type().shape().dim()) n = dim.has_dim_value() ? n * dim.dim_value() : 0;
    total += n;
  }
  for (const onnx::TensorProto& init : model.graph().initializer()) {
    int64_t n = 1;
    for (int64_t d : init.dims()) n *= d;
    total += n;
  }
  return total;
}

TEST(OnnxCorpus, ManifestListsEveryModel) {
  std::vector<ManifestRow> rows = ReadManifest();
  EXPECT_GE(rows.size(), 8u);
  for (const ManifestRow& row : rows) {
    std::ifstream in(kCorpus + "/" + row.file, std::ios::binary | std::ios::ate);
    ASSERT_TRUE(in.good()) << row.file;
    EXPECT_LT(static_cast<int64_t>(in.tellg()), 1 << 20) << row.file << " should stay small";
  }
}

TEST(OnnxCorpus, EveryModelImportsWithOneOperatorPerNode) {
  for (const ManifestRow& row : ReadManifest()) {
    SCOPED_TRACE(row.file);
    OnnxImportResult result = Import(row.file);
    EXPECT_EQ(result.problem.graph.num_ops(), row.nodes);
    EXPECT_THAT(result.warnings, ::testing::IsEmpty());
    EXPECT_GT(result.problem.graph.num_edges(), 0);
    double flops = 0;
    for (OpId op = 0; op < result.problem.graph.num_ops(); ++op) flops += result.problem.graph.flops(op);
    EXPECT_GT(flops, 0);
  }
}

TEST(OnnxCorpus, MacsMatchTorchvisionFigures) {
  // torchvision's model cards give "GFLOPS" that are multiply-accumulates of conv and linear layers.
  const std::map<std::string, double> published = {
      {"resnet50.onnx", 4.09e9},
      {"vgg16.onnx", 15.47e9},
      {"inception_v3.onnx", 5.71e9},
      {"mobilenet_v3_large.onnx", 0.22e9},
  };
  for (const auto& [file, macs] : published) {
    OnnxImportResult result = Import(file);
    EXPECT_NEAR(result.macs / macs, 1.0, 0.05) << file << ": " << result.macs;
    // The same figure from the graph itself: matrix ops account for 2 FLOPs a MAC plus their bias adds.
    double matrix_flops = 0;
    const Graph& g = result.problem.graph;
    for (OpId op = 0; op < g.num_ops(); ++op) {
      if (g.op_type(op) == "Conv" || g.op_type(op) == "Gemm" || g.op_type(op) == "MatMul") matrix_flops += g.flops(op);
    }
    EXPECT_NEAR(matrix_flops / 2 / macs, 1.0, 0.05) << file;
  }
}

TEST(OnnxCorpus, ParametersMatchTheFileAndTorchvision) {
  const std::map<std::string, int64_t> published = {
      {"resnet50.onnx", 25'557'032},
      {"vgg16.onnx", 138'357'544},
      {"mobilenet_v3_large.onnx", 5'483'032},
  };
  for (const ManifestRow& row : ReadManifest()) {
    SCOPED_TRACE(row.file);
    OnnxImportResult result = Import(row.file);
    int64_t elements = result.problem.graph.total_param_bytes() / 4;  // every corpus weight is float32
    EXPECT_EQ(elements, WeightElementsInFile(row.file));
    // The exporter folds BatchNorm into the preceding Conv (a bias per channel instead of four statistics),
    // so the count differs from torch's by at most the buffers.
    EXPECT_NEAR(static_cast<double>(elements) / static_cast<double>(row.parameters), 1.0, 0.01);
    if (auto it = published.find(row.file); it != published.end()) {
      EXPECT_EQ(row.parameters, it->second);
      EXPECT_NEAR(static_cast<double>(elements) / static_cast<double>(it->second), 1.0, 0.01);
    }
  }
}

TEST(OnnxCorpus, BatchSizeScalesActivations) {
  OnnxImportOptions eight;
  eight.batch_size = 8;
  OnnxImportResult one = Import("resnet50.onnx");
  OnnxImportResult batch = Import("resnet50.onnx", eight);
  const Graph& a = one.problem.graph;
  const Graph& b = batch.problem.graph;
  OpId conv = a.FindOp("/conv1/Conv");
  ASSERT_NE(conv, kNone);
  EXPECT_EQ(a.tensor(a.first_output(conv)).bytes, 64 * 112 * 112 * 4);
  EXPECT_EQ(b.tensor(b.first_output(b.FindOp("/conv1/Conv"))).bytes, 8 * a.tensor(a.first_output(conv)).bytes);
  EXPECT_NEAR(batch.macs / one.macs, 8.0, 1e-9);
  EXPECT_EQ(a.total_param_bytes(), b.total_param_bytes());
}

TEST(OnnxCorpus, SequenceLengthBindsTransformerShapes) {
  OnnxImportOptions options;
  options.batch_size = 2;
  options.sequence_length = 64;
  OnnxImportResult result = Import("transformer_encoder.onnx", options);
  const Graph& g = result.problem.graph;
  OpId last = g.FindOp("/encoder/layers.5/norm2/Add_1");
  ASSERT_NE(last, kNone);
  EXPECT_EQ(g.tensor(g.first_output(last)).bytes, 2 * 64 * 512 * 4);
  // Per layer: Q, K, V and output projections (4 d^2), the feed-forward (2 * d * 2048), and the two attention
  // products (2 * seq * d), per token.
  double per_token = 6 * (4.0 * 512 * 512 + 2.0 * 512 * 2048 + 2.0 * 64 * 512);
  EXPECT_NEAR(result.macs / (2 * 64 * per_token), 1.0, 0.01);

  // A named dimension wins over the rules.
  options.dims["seq"] = 16;
  OnnxImportResult shorter = Import("transformer_encoder.onnx", options);
  const Graph& s = shorter.problem.graph;
  EXPECT_EQ(s.tensor(s.first_output(s.FindOp("/encoder/layers.5/norm2/Add_1"))).bytes, 2 * 16 * 512 * 4);
}

TEST(OnnxCorpus, RecurrentModelsCountEveryStep) {
  OnnxImportOptions options;
  options.sequence_length = 32;
  OnnxImportResult lstm = Import("lstm_seq2seq.onnx", options);
  // Two stacks of two layers: gates 4 * 1024 * (input + 1024) per step, inputs 512 then 1024; plus the
  // projection 1024 x 32000 per target token.
  double per_step = 2 * 4.0 * 1024 * ((512 + 1024) + (1024 + 1024));
  EXPECT_NEAR(lstm.macs / (32 * (per_step + 1024.0 * 32000)), 1.0, 0.01);
  OnnxImportResult gru = Import("gru_seq2seq.onnx", options);
  double gru_step = 2 * 3.0 * 1024 * ((512 + 1024) + (1024 + 1024));
  EXPECT_NEAR(gru.macs / (32 * (gru_step + 1024.0 * 32000)), 1.0, 0.01);
}

TEST(OnnxCorpus, ImportedGraphsFeedTheCostModel) {
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("4xA100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  for (const ManifestRow& row : ReadManifest()) {
    SCOPED_TRACE(row.file);
    OnnxImportResult result = Import(row.file);
    absl::StatusOr<CostModel> cost = CostModel::Create(result.problem.graph, *topology);
    ASSERT_TRUE(cost.ok()) << cost.status();
    double total = 0;
    for (OpId op = 0; op < result.problem.graph.num_ops(); ++op) {
      EXPECT_TRUE(std::isfinite(cost->fastest_time(op)));
      total += cost->fastest_time(op);
    }
    EXPECT_GT(total, 0);
  }
}

// Prints what each model imports to at batch 1 and sequence length 128, for reading test logs.
TEST(OnnxCorpus, PrintsFigures) {
  for (const ManifestRow& row : ReadManifest()) {
    OnnxImportResult result = Import(row.file);
    const Graph& g = result.problem.graph;
    double flops = 0, bytes = 0;
    for (OpId op = 0; op < g.num_ops(); ++op) {
      flops += g.flops(op);
      bytes += g.bytes_accessed(op);
    }
    std::printf("%-26s %5d ops %6d edges  MACs %9.4f G  FLOPs %9.4f G  bytes %8.1f MB  params %12lld (torch %lld)\n",
                row.file.c_str(), g.num_ops(), g.num_edges(), result.macs / 1e9, flops / 1e9, bytes / 1e6,
                static_cast<long long>(g.total_param_bytes() / 4), static_cast<long long>(row.parameters));
  }
}

TEST(OnnxCorpus, ImportIsDeterministic) {
  std::string first = GraphHash(Import("transformer_decoder.onnx").problem.graph);
  EXPECT_EQ(GraphHash(Import("transformer_decoder.onnx").problem.graph), first);
}

}  // namespace
}  // namespace placement

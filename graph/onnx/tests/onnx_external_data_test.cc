// Weights stored next to the model (ONNX external data): sizes come from the tensor's shape and the file is
// only checked with stat(), locations cannot leave the model's folder, and oversized files are refused.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"

namespace placement {
namespace {

using ::testing::HasSubstr;
using namespace onnx_testing;  // NOLINT: model-building helpers

// x [batch, 4] x W [4, 3]: W's 48 bytes live at `offset` in `location`.
onnx::ModelProto WithExternalWeight(const std::string& location, int64_t offset, int64_t length = 48) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 4});
  onnx::TensorProto& w = AddInitializer(m, "w", {4, 3});
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&w](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* e = w.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "mm");
  AddOutput(m, "y");
  return m;
}

std::string ImportError(const std::string& path) {
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path, {});
  EXPECT_FALSE(result.ok());
  return std::string(result.status().message());
}

TEST(OnnxExternalData, SizesComeFromTheShapeAndTheFileIsOnlyChecked) {
  TempDir dir;
  dir.Write("weights.bin", std::string(16 + 48, '\x01'));
  std::string path = dir.Write("model.onnx", Serialize(WithExternalWeight("weights.bin", 16)));
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path, {});
  ASSERT_TRUE(result.ok()) << result.status();
  const Graph& g = result->problem.graph;
  EXPECT_EQ(g.param_bytes(g.FindOp("mm")), 48);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("mm")), 2.0 * 4 * 3);

  // In a subfolder, and without a length (it defaults to the rest of the tensor's bytes).
  std::filesystem::create_directory(dir.path() + "/data");
  dir.Write("data/w.bin", std::string(48, '\0'));
  EXPECT_TRUE(ImportOnnxFile(dir.Write("sub.onnx", Serialize(WithExternalWeight("data/w.bin", 0, -1))), {}).ok());
}

TEST(OnnxExternalData, ModelSavedByOnnxImports) {
  // tests/data/corpus/external: an MLP saved with onnx.save_model(..., save_as_external_data=True).
  absl::StatusOr<OnnxImportResult> result =
      ImportOnnxFile(std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/external/mlp.onnx", {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->problem.graph.total_param_bytes(), (64 * 128 + 128 + 128 * 10 + 10) * 4);
  EXPECT_DOUBLE_EQ(result->macs, 64 * 128 + 128 * 10);
  EXPECT_THAT(result->warnings, ::testing::IsEmpty());
}

TEST(OnnxExternalData, BytesNeedTheModelFolder) {
  TempDir dir;
  dir.Write("weights.bin", std::string(48, '\0'));
  std::string bytes = Serialize(WithExternalWeight("weights.bin", 0));
  absl::StatusOr<OnnxImportResult> no_dir = ImportOnnxBytes(bytes, {});
  ASSERT_FALSE(no_dir.ok());
  EXPECT_THAT(std::string(no_dir.status().message()),
              HasSubstr("initializer 'w' keeps its data in 'weights.bin' but the model's folder is unknown"));
  OnnxImportOptions options;
  options.model_dir = dir.path();
  EXPECT_TRUE(ImportOnnxBytes(bytes, options).ok());
}

TEST(OnnxExternalData, LocationsCannotLeaveTheModelFolder) {
  TempDir outside;
  outside.Write("secret.bin", std::string(48, '\0'));
  TempDir dir;
  std::filesystem::create_directory(dir.path() + "/m");
  std::string escape = "../" + std::filesystem::path(outside.path()).filename().string() + "/secret.bin";
  EXPECT_THAT(ImportError(dir.Write("m/up.onnx", Serialize(WithExternalWeight(escape, 0)))),
              HasSubstr("which is outside the model's folder"));
  EXPECT_THAT(ImportError(dir.Write("m/abs.onnx", Serialize(WithExternalWeight(outside.path() + "/secret.bin", 0)))),
              HasSubstr("which is outside the model's folder"));
  EXPECT_THAT(ImportError(dir.Write("m/mid.onnx", Serialize(WithExternalWeight("a/../../secret.bin", 0)))),
              HasSubstr("which is outside the model's folder"));
  // A symbolic link inside the folder that leads out of it.
  ASSERT_EQ(::symlink((outside.path() + "/secret.bin").c_str(), (dir.path() + "/m/link.bin").c_str()), 0);
  EXPECT_THAT(ImportError(dir.Write("m/link.onnx", Serialize(WithExternalWeight("link.bin", 0)))),
              HasSubstr("resolves outside the model's folder"));
}

TEST(OnnxExternalData, MissingShortOrInconsistentDataIsAnError) {
  TempDir dir;
  dir.Write("short.bin", std::string(40, '\0'));
  absl::StatusOr<OnnxImportResult> missing =
      ImportOnnxFile(dir.Write("missing.onnx", Serialize(WithExternalWeight("nothere.bin", 0))), {});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("initializer 'w': external data file"));
  EXPECT_THAT(ImportError(dir.Write("short.onnx", Serialize(WithExternalWeight("short.bin", 0)))),
              HasSubstr("needs bytes 0 to 0 + 48 of 'short.bin', which has 40"));
  EXPECT_THAT(ImportError(dir.Write("length.onnx", Serialize(WithExternalWeight("short.bin", 0, 40)))),
              HasSubstr("external_data length 40 differs from the 48 bytes of its shape [4,3]"));
  onnx::ModelProto bad_offset = WithExternalWeight("short.bin", 0);
  bad_offset.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("-5");
  EXPECT_THAT(ImportError(dir.Write("offset.onnx", Serialize(bad_offset))),
              HasSubstr("external_data offset '-5' is not a non-negative integer"));
}

TEST(OnnxExternalData, HugeExternalWeightsAreNeverRead) {
  // A 3 GiB sparse file holds a [32768, 24576] float weight (3 GiB): importing only stats it.
  TempDir dir;
  std::string data = dir.path() + "/big.bin";
  dir.Write("big.bin", "");
  ASSERT_EQ(::truncate(data.c_str(), int64_t{3} << 30), 0);
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 24576});
  onnx::TensorProto& w = *m.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(24576);
  w.add_dims(32768);
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w.add_external_data();
  location->set_key("location");
  location->set_value("big.bin");
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "mm");
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(dir.Write("big.onnx", Serialize(m)), {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->problem.graph.total_param_bytes(), int64_t{3} << 30);
}

TEST(OnnxExternalData, FilesOverTwoGigabytesAreRefused) {
  // Protobuf cannot represent a message this size; a sparse file shows the check without the disk space.
  TempDir dir;
  std::string path = dir.Write("huge.onnx", Serialize(WithExternalWeight("w.bin", 0)));
  ASSERT_EQ(::truncate(path.c_str(), (int64_t{1} << 31) + 10), 0);
  std::string error = ImportError(path);
  EXPECT_THAT(error, HasSubstr("protobuf messages are limited to 2 GiB"));
  EXPECT_THAT(error, HasSubstr("external data"));
}

}  // namespace
}  // namespace placement

// Module paths from exported node names, and a placement as a module -> device map at the coarsest level that
// holds.
#include "graph/module_map.h"

#include <gtest/gtest.h>

#include "graph/topology_json.h"

namespace placement {
namespace {

TEST(ModuleScope, ExporterNamesLeadBackToModulePaths) {
  EXPECT_EQ(ModuleScopeOf("/layer1/layer1.0/conv1/Conv"), "layer1.0.conv1");
  EXPECT_EQ(ModuleScopeOf("/layer1/layer1.0/relu_1/Relu"), "layer1.0.relu_1");
  EXPECT_EQ(ModuleScopeOf("/features/features.3/block/block.0/block.0.0/Conv"), "features.3.block.0.0");
  EXPECT_EQ(ModuleScopeOf("/layer1/layer1.0/Add"), "layer1.0");
  EXPECT_EQ(ModuleScopeOf("/Flatten"), "");
  EXPECT_EQ(ModuleScopeOf("Identity_3"), std::nullopt);
  EXPECT_EQ(ModuleScopeOf("conv1"), std::nullopt);
  EXPECT_EQ(ModuleScopeOf("//Conv"), std::nullopt);
}

// The ops of a small ResNet block, in export order, each on a device of 2xA100.
Graph Block(const std::vector<std::string>& names) {
  GraphBuilder builder;
  for (const std::string& name : names) {
    OpSpec op;
    op.name = name;
    op.op_type = "Conv";
    op.flops = name.find("Add") != std::string::npos ? 1e3 : 1e9;
    op.outputs.push_back(OutputTensor{.bytes = 4096});
    builder.AddOp(op);
  }
  for (size_t i = 1; i < names.size(); ++i) builder.AddEdge(names[i - 1], 0, names[i]);
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

std::vector<std::pair<std::string, std::string>> Pairs(const std::vector<ModuleDevice>& map) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ModuleDevice& m : map) out.emplace_back(m.module, m.device);
  return out;
}

TEST(ModuleMap, CoarsestModuleThatSharesOneDevice) {
  const Graph g = Block({"/conv1/Conv", "/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu/Relu",
                         "/layer1/layer1.0/conv2/Conv", "/layer1/layer1.0/Add", "/layer1/layer1.0/relu_1/Relu",
                         "/layer1/layer1.1/conv1/Conv", "/Flatten", "/fc/Gemm"});
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("2xA100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  const std::string d0 = topology->device(0).name, d1 = topology->device(1).name;

  Placement all_on_one{std::vector<DeviceId>(g.num_ops(), 0)};
  EXPECT_EQ(Pairs(ModuleDeviceMap(g, all_on_one, *topology)),
            (std::vector<std::pair<std::string, std::string>>{{"", d0}}));

  // conv1 and layer1.0 on d0 except its second relu call; layer1.1 and the head on d1.
  Placement split{{0, 0, 0, 0, 0, 1, 1, 1, 1}};
  EXPECT_EQ(Pairs(ModuleDeviceMap(g, split, *topology)),
            (std::vector<std::pair<std::string, std::string>>{{"", d1},  // its own op: Flatten
                                                              {"conv1", d0},
                                                              {"layer1.0", d0},  // its own op: Add
                                                              {"layer1.0.conv1", d0},
                                                              {"layer1.0.relu", d0},
                                                              {"layer1.0.conv2", d0},
                                                              {"layer1.0.relu_1", d1},
                                                              {"layer1.1", d1},
                                                              {"fc", d1}}));
}

TEST(ModuleMap, GraphsWithoutScopesHaveNone) {
  const Graph g = Block({"a", "b"});
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("2xA100");
  ASSERT_TRUE(topology.ok());
  EXPECT_TRUE(ModuleDeviceMap(g, Placement{{0, 1}}, *topology).empty());
}

TEST(ModuleMap, PipelineStagesAreNamedByTheirModules) {
  const Graph g = Block({"/conv1/Conv", "/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/Add",
                         "/layer1/layer1.1/conv1/Conv", "/layer2/layer2.0/conv1/Conv", "/Flatten", "/fc/Gemm"});
  // Stage 0 runs conv1 and layer1.0; stage 1 the rest.
  const std::vector<std::vector<std::string>> stages = StageModules(g, std::vector<int32_t>{0, 0, 0, 1, 1, 1, 1}, 2);
  EXPECT_EQ(stages, (std::vector<std::vector<std::string>>{{"conv1", "layer1.0"}, {"layer1.1", "layer2", "", "fc"}}));
  // One stage: the whole model.
  EXPECT_EQ(StageModules(g, std::vector<int32_t>(7, 0), 1), (std::vector<std::vector<std::string>>{{""}}));
  // No module scopes: every stage without names.
  EXPECT_EQ(StageModules(Block({"a", "b"}), std::vector<int32_t>{0, 1}, 2),
            (std::vector<std::vector<std::string>>{{}, {}}));
}

}  // namespace
}  // namespace placement

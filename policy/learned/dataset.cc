#include "policy/learned/dataset.h"

#include <filesystem>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/graph_families.h"
#include "graph/onnx/onnx_import.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "simulator/objectives.h"

namespace placement::learned {

namespace {

// Coarsens the instance's graph and derives its features and bound; its costs, objective and simulator are set.
absl::Status Prepare(Instance& x, const CoarseningOptions& coarsening) {
  absl::StatusOr<Coarsening> groups = Coarsen(*x.costs, coarsening);
  if (!groups.ok()) return absl::Status(groups.status().code(), absl::StrCat(x.name, ": ", groups.status().message()));
  x.groups = *std::move(groups);
  x.input = BuildPolicyInput(*x.costs, x.groups);
  x.bound = ComputeLowerBound(*x.costs, x.objective).value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Instance>> MakeInstance(std::string name, std::string family, Graph graph,
                                                       const std::string& topology,
                                                       const CoarseningOptions& coarsening) {
  absl::StatusOr<Topology> topo = ParseTopologyShorthand(topology);
  if (!topo.ok()) return topo.status();
  return MakeInstanceOn(std::move(name), std::move(family), std::move(graph), *std::move(topo), coarsening);
}

absl::StatusOr<std::unique_ptr<Instance>> MakeInstanceOn(std::string name, std::string family, Graph graph,
                                                         Topology topology, const CoarseningOptions& coarsening) {
  auto x = std::make_unique<Instance>();
  x->name = std::move(name);
  x->family = std::move(family);
  x->graph = std::move(graph);
  x->topology = std::move(topology);
  absl::StatusOr<CostModel> costs = CostModel::Create(x->graph, x->topology);
  if (!costs.ok()) return absl::Status(costs.status().code(), absl::StrCat(x->name, ": ", costs.status().message()));
  x->costs = std::make_shared<const CostModel>(*std::move(costs));
  if (absl::Status s = Prepare(*x, coarsening); !s.ok()) return s;
  return x;
}

absl::StatusOr<std::unique_ptr<Instance>> InstanceOfProblem(std::string name, const CostModel& costs,
                                                            Objective objective, const SimulatorConfig& simulator,
                                                            const CoarseningOptions& coarsening) {
  auto x = std::make_unique<Instance>();
  x->name = std::move(name);
  x->costs = std::shared_ptr<const CostModel>(&costs, [](const CostModel*) {});  // not owned
  x->objective = objective;
  x->simulator = simulator;
  if (absl::Status s = Prepare(*x, coarsening); !s.ok()) return s;
  return x;
}

absl::StatusOr<std::vector<std::unique_ptr<Instance>>> MakeDataset(const DatasetOptions& options) {
  std::vector<std::unique_ptr<Instance>> out;
  std::mt19937_64 rng(options.seed);
  auto add = [&](const std::string& name, const std::string& family, const Graph& forward) -> absl::Status {
    std::vector<std::pair<std::string, Graph>> graphs = {{absl::StrCat(name, "/infer"), forward}};
    if (options.training_graphs) {
      absl::StatusOr<Graph> step = BuildTrainingGraph(forward);
      if (!step.ok()) return absl::Status(step.status().code(), absl::StrCat(name, ": ", step.status().message()));
      graphs.emplace_back(absl::StrCat(name, "/train"), *std::move(step));
    }
    for (auto& [graph_name, graph] : graphs) {
      for (int32_t t = 0; t < options.topologies_per_graph; ++t) {
        const std::string& topo = options.topologies[rng() % options.topologies.size()];
        absl::StatusOr<std::unique_ptr<Instance>> x =
            MakeInstance(absl::StrCat(graph_name, " ", topo), family, graph, topo, options.coarsening);
        if (!x.ok()) return x.status();
        out.push_back(*std::move(x));
      }
    }
    return absl::OkStatus();
  };

  std::vector<std::string> families = options.families.empty() ? GraphFamilies() : options.families;
  for (const std::string& family : families) {
    for (int32_t size : options.sizes) {
      for (int32_t s = 0; s < options.seeds_per_size; ++s) {
        FamilyOptions f;
        f.approx_ops = size;
        f.seed = options.seed * 1000 + static_cast<uint64_t>(size) * 10 + s;
        absl::StatusOr<Graph> g = GenerateFamily(family, f);
        if (!g.ok()) return g.status();
        absl::Status st = add(absl::StrCat(family, "/", size, "#", s), family, *g);
        if (!st.ok()) return st;
      }
    }
  }
  for (const std::string& model : options.corpus_models) {
    const std::string path = (std::filesystem::path(options.corpus_dir) / (model + ".onnx")).string();
    OnnxImportOptions import;
    import.batch_size = 32;
    absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(path, import);
    if (!imported.ok()) return imported.status();
    absl::Status st = add(model, model, imported->problem.graph);
    if (!st.ok()) return st;
  }
  return out;
}

}  // namespace placement::learned

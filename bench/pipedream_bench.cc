// The hybrid planner under PipeDream's cost model against PipeDream's own planner on PipeDream's profiles
// (../shared/bench/pipedream/reference.tsv): our time per stage and theirs, the ratio, our planner's time and
// theirs, measured in the same run by running their optimizer (peer/, needs Debian's python3-numpy) on the rows
// of the models named by --peer (the README's published times, marked *, stand for the others: a model's
// published time over its six rows). Run by
// `./placement bench pipedream_bench`; the figures are kept in docs/BENCHMARKS.md.
//   pipedream_bench [SHARED_DIR] [--peer=alexnet,vgg16,...|fast|all|none] [--repeats=N]
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "graph/cost_model.h"
#include "graph/pipedream.h"
#include "graph/topology_json.h"
#include "policy/parallel/hybrid_placer.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

using Row = test_support::PipeDreamReference;

// PipeDream's optimizer flags for each cluster (the README's table).
const std::map<std::string, std::pair<std::string, std::string>>& PeerFlags() {
  static const auto* flags = new std::map<std::string, std::pair<std::string, std::string>>{
      {"flat8_10GBps", {"8", "10000000000"}},
      {"flat16_10GBps", {"16", "10000000000"}},
      {"2x4_4GBps_2.5GBps", {"4 2", "4000000000 2500000000"}}};
  return *flags;
}

// Runs PipeDream's optimizer on one row; its time per stage and wall seconds, or -1 when it could not run.
std::pair<double, double> RunPeer(const std::string& dir, const Row& row) {
  const auto& [n, b] = PeerFlags().at(row.topology);
  const std::string command = absl::StrCat(
      "cd '", dir, "/peer' && PYTHONPATH=stub /usr/bin/python3 optimizer_graph_hierarchical.py -f ../profiles/",
      row.model, ".txt -n ", n, " -b ", b, " --activation_compression_ratio 1",
      row.mode == "straight" ? " --straight_pipeline" : "", " 2>&1");
  const absl::Time start = absl::Now();
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, -1};
  std::string out;
  char buffer[4096];
  while (size_t got = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, got);
  const int status = pclose(pipe);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  double value = -1;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, "Time per stage in pipeline:")) {
      std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (!absl::SimpleAtod(words.back(), &value)) value = -1;
    }
  }
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0 ? value : -1, seconds};
}

struct Ours {
  double value = -1, seconds = 0;
  std::string replicas, status;
  bool proven = false;
};

Ours Plan(const std::string& dir, const Row& row, int repeats) {
  Ours o;
  absl::StatusOr<Problem> p =
      ParsePipeDreamProfile(test_support::ReadFileToString(dir + "/profiles/" + row.model + ".txt"), true);
  absl::StatusOr<Topology> t = LoadTopologyFile(dir + "/topologies/" + row.topology + ".json");
  if (!p.ok() || !t.ok()) {
    o.status = std::string((p.ok() ? t.status() : p.status()).message());
    return o;
  }
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, *t);
  if (!costs.ok()) {
    o.status = std::string(costs.status().message());
    return o;
  }
  PlacementProblem problem;
  problem.costs = &*costs;
  problem.objective = Objective::kThroughput;
  problem.cost_model = CostModelKind::kPipeDream;
  const Parallelism mode = row.mode == "straight" ? Parallelism::kPipeline : Parallelism::kHybrid;
  o.seconds = 1e300;
  for (int k = 0; k < repeats; ++k) {
    const absl::Time start = absl::Now();
    absl::StatusOr<PlacerResult> r = PlanParallel(problem, Budget{}, mode);
    o.seconds = std::min(o.seconds, absl::ToDoubleSeconds(absl::Now() - start));
    if (!r.ok()) {
      o.status = std::string(r.status().message());
      return o;
    }
    o.value = r->evaluation.value;
    o.proven = r->proven_optimal;
    std::vector<int32_t> reps;
    for (int32_t s = 0; s < r->plan->plan.num_stages(); ++s) reps.push_back(r->plan->plan.replicas(s));
    o.replicas = absl::StrJoin(reps, ",");
  }
  return o;
}

// The README's published times of PipeDream's optimizer, seconds per row (its figures are for a model's six).
double PublishedSeconds(const Row& row) {
  static const std::map<std::string, double> per_model = {
      {"alexnet", 0.8},   {"vgg16", 0.8},      {"gnmt", 2.3},      {"resnet18", 2.8},   {"squeezenet1_0", 2.8},
      {"resnet50", 29.7}, {"resnext50", 30.1}, {"resnet101", 166}, {"resnext101", 168}, {"densenet121", 200}};
  if (row.model == "gnmt_large") {
    if (row.topology != "2x4_4GBps_2.5GBps") return 60.0 / 4;
    return row.mode == "hybrid" ? 27.5 * 60 : 24 * 60;
  }
  const auto it = per_model.find(row.model);
  return it == per_model.end() ? -1 : it->second / 6;
}

}  // namespace
}  // namespace placement

int main(int argc, char** argv) {
  std::string shared = PLACEMENT_SHARED_DIR, peer = "fast";
  int repeats = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--peer="))
      peer = arg.substr(7);
    else if (absl::StartsWith(arg, "--repeats="))
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    else if (!absl::StartsWith(arg, "--"))
      shared = arg;
  }
  const std::string dir = shared + "/bench/pipedream";
  if (!std::filesystem::exists(dir + "/reference.tsv")) {
    std::cout << "pipedream_bench: " << dir << "/reference.tsv is not here; nothing to run\n";
    return 0;
  }
  std::set<std::string> peers;
  if (peer == "fast")
    peers = {"alexnet", "vgg16", "gnmt", "resnet18", "squeezenet1_0"};
  else if (peer == "all")
    peers = {"*"};
  else if (peer != "none")
    for (absl::string_view m : absl::StrSplit(peer, ',')) peers.insert(std::string(m));
  std::printf(
      "model\ttopology\tmode\tours\tpipedream\tratio\tour_ms\tpeer_s\tpeer_value\tour_replicas\ttheir_"
      "replicas\tproven\n");
  int worse = 0;
  for (const placement::Row& row : placement::test_support::ReadPipeDreamReference(dir)) {
    const placement::Ours ours = placement::Plan(dir, row, repeats);
    std::string peer_s = absl::StrFormat("%.3g*", placement::PublishedSeconds(row)), peer_value = "";
    if (peers.count("*") || peers.count(row.model)) {
      const auto [value, seconds] = placement::RunPeer(dir, row);
      peer_s = absl::StrFormat("%.3g", seconds);
      peer_value = value < 0 ? "failed" : absl::StrFormat("%.6g", value);
    }
    const double ratio = ours.value > 0 ? ours.value / row.time_per_stage : 0;
    worse += !(ratio > 0 && ratio <= 1 + 1e-9);
    std::printf("%s\t%s\t%s\t%.6g\t%.6g\t%.4f\t%.1f\t%s\t%s\t%s\t%s\t%s%s\n", row.model.c_str(), row.topology.c_str(),
                row.mode.c_str(), ours.value, row.time_per_stage, ratio, 1000 * ours.seconds, peer_s.c_str(),
                peer_value.c_str(), ours.replicas.c_str(), row.replicas.c_str(), ours.proven ? "yes" : "no",
                ours.status.empty() ? "" : (" " + ours.status).c_str());
    std::fflush(stdout);
  }
  std::printf("rows worse than PipeDream: %d\n", worse);
  return worse == 0 ? 0 : 1;
}

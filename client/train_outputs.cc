#include "client/train_outputs.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/learning_curve.h"
#include "graph/canonical.h"
#include "graph/file_io.h"

namespace placement::cli {
namespace {

using nlohmann::json;

std::vector<CurveRow> RowsOf(const std::vector<learned::CurvePoint>& curve) {
  std::vector<CurveRow> rows;
  for (const learned::CurvePoint& p : curve) {
    rows.push_back(CurveRow{"reinforce", p.iteration, p.seconds, p.loss, p.entropy, p.sample_ratio, p.greedy_ratio});
  }
  return rows;
}

json GraphList(const std::vector<std::string>& sources, const TrainedGraphs& graphs) {
  json out = json::array();
  for (const std::string& source : sources) {
    const auto it = graphs.find(source);
    json g = {{"source", source}};
    if (it != graphs.end()) {
      g["sha256"] = it->second.hash;
      g["operators"] = it->second.operators;
    }
    out.push_back(std::move(g));
  }
  return out;
}

json Figures(const learned::PlacerFigures& f, double curve_ratio) {
  return {{"version", f.version},
          {"policy_placer_geomean_step_time_over_lower_bound", f.geomean_ratio},
          {"instances", f.instances},
          {"validation_ratio", curve_ratio}};
}

json Manifest(const TrainOptions& o, const learned::TrainingRunOptions& run, const learned::TrainingRunReport& r,
              const TrainedGraphs& graphs, const std::vector<learned::RunTopology>& topologies,
              const std::string& weights) {
  json clusters = json::array();
  for (const learned::RunTopology& t : topologies)
    clusters.push_back({{"source", t.source}, {"devices", t.topology.num_devices()}});
  const absl::StatusOr<std::string> bytes = ReadWholeFile(weights);
  return {
      {"weights", std::filesystem::path(weights).filename().string()},
      {"version", r.version},
      {"loaded_version", r.new_placer.version},
      {"sha256", bytes.ok() ? Sha256Hex(*bytes) : ""},
      {"bytes", bytes.ok() ? bytes->size() : 0},
      {"command", o.command_line},
      {"started_from",
       run.init.empty() ? json("random weights") : json({{"file", run.init}, {"version", r.start_version}})},
      {"graphs",
       {{"training", GraphList(r.train_sources, graphs)}, {"validation", GraphList(r.validation_sources, graphs)}}},
      {"skipped", r.skipped},
      {"clusters", clusters},
      {"instances", {{"training", r.train_instances}, {"validation", r.validation_instances}}},
      {"run",
       {{"iterations", r.iterations},
        {"seconds", r.seconds},
        {"interrupted", r.stopped},
        {"seed", run.seed},
        {"validation_share", run.validation_share}}},
      {"validation",
       {{"new", Figures(r.new_placer, r.best_validation)},
        {"start", Figures(r.start_placer, r.start_validation)},
        {"what",
         "policy placer (single shot, as served): geometric mean over the validation instances of step time / "
         "lower bound; validation_ratio: the learning curve's (better of greedy and the greedy scheduled "
         "decoding, mean step time / lower bound, +2 per overflow)"}}},
  };
}

}  // namespace

TrainedGraphs DescribeGraphs(const std::vector<learned::RunGraph>& graphs) {
  TrainedGraphs out;
  for (const learned::RunGraph& g : graphs) out[g.source] = GraphFacts{g.hash, g.graph.num_ops()};
  return out;
}

std::string BesideWeights(const std::string& weights, const std::string& extension) {
  std::filesystem::path p(weights);
  if (p.extension() == extension) return weights + extension;  // never the weights file itself
  return p.replace_extension(extension).string();
}

absl::StatusOr<TrainOutputs> WriteTrainOutputs(const TrainOptions& options, const learned::TrainingRunOptions& run,
                                               const learned::TrainingRunReport& report, const TrainedGraphs& graphs,
                                               const std::vector<learned::RunTopology>& topologies) {
  TrainOutputs out{run.out, BesideWeights(run.out, ".json"), BesideWeights(run.out, ".tsv"),
                   BesideWeights(run.out, ".svg")};
  const std::vector<CurveRow> rows = RowsOf(report.curve);
  if (absl::Status s = WriteWholeFile(out.curve_tsv, CurveTsv(rows)); !s.ok()) return s;
  absl::StatusOr<std::string> svg = CurveSvg(rows);
  if (svg.ok()) {
    if (absl::Status s = WriteWholeFile(out.curve_svg, *svg); !s.ok()) return s;
  } else {
    out.curve_svg.clear();  // a run stopped before its first iteration has no curve to draw
  }
  const json manifest = Manifest(options, run, report, graphs, topologies, out.weights);
  if (absl::Status s = WriteWholeFile(out.manifest, manifest.dump(2) + "\n"); !s.ok()) return s;
  return out;
}

std::string TrainSummary(const learned::TrainingRunReport& r, const TrainOutputs& out) {
  std::string s =
      absl::StrFormat("%s%d iterations in %.0f s on %d training instances (%d graphs), validated on %d (%d graphs)%s\n",
                      r.stopped ? "interrupted: " : "", r.iterations, r.seconds, r.train_instances,
                      r.train_sources.size(), r.validation_instances, r.validation_sources.size(),
                      r.skipped.empty() ? "" : absl::StrCat("; ", r.skipped.size(), " inputs skipped"));
  absl::StrAppendFormat(&s, "validation ratio %.4f -> %.4f (the checkpoint written)\n", r.start_validation,
                        r.best_validation);
  absl::StrAppendFormat(&s, "policy placer on validation, step time / lower bound (geometric mean): %s %.4f, %s %.4f\n",
                        r.start_placer.version, r.start_placer.geomean_ratio, r.new_placer.version,
                        r.new_placer.geomean_ratio);
  absl::StrAppend(&s, "wrote ", out.weights, ", ", out.manifest, ", ", out.curve_tsv,
                  out.curve_svg.empty() ? "" : absl::StrCat(", ", out.curve_svg), "\n");
  return s;
}

}  // namespace placement::cli

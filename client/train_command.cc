#include "client/train_command.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/train_outputs.h"
#include "client/train_progress.h"
#include "graph/canonical.h"
#include "graph/topology_json.h"
#include "policy/learned/torch_device.h"
#include "policy/learned/training_run.h"
#include "policy/learned/weights_path.h"

namespace placement::cli {
namespace {

namespace fs = std::filesystem;

// Set by SIGINT and SIGTERM: a lock-free atomic store is all the handler does (async-signal-safe); the trainer
// polls it between iterations.
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void RequestStop(int /*signal*/) { stop_requested.store(true, std::memory_order_relaxed); }

// SIGINT and SIGTERM end the run early while this lives; the previous dispositions come back after.
class StopOnSignals {
 public:
  StopOnSignals() {
    struct sigaction action {};
    action.sa_handler = RequestStop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

bool IsGraphFile(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".onnx" || ext == ".json";
}

// One graph of a file (its inference graph or its training step), or why it was left out.
void AddGraph(const std::string& source, absl::StatusOr<LoadedGraph> loaded, std::vector<learned::RunGraph>& graphs,
              std::map<std::string, std::string>& seen, std::vector<std::string>& skipped) {
  if (!loaded.ok()) {
    // The loader's messages start with the file's path already.
    const absl::string_view message = loaded.status().message();
    skipped.push_back(absl::StartsWith(message, source) ? std::string(message) : absl::StrCat(source, ": ", message));
    return;
  }
  learned::RunGraph g{source, GraphHash(loaded->problem.graph), std::move(loaded->problem.graph)};
  if (auto [it, fresh] = seen.emplace(g.hash, source); !fresh) {
    skipped.push_back(absl::StrCat(source, ": the same graph as ", it->second));
    return;
  }
  graphs.push_back(std::move(g));
}

// Every file's graphs; what cannot be read is reported in `skipped`, by file.
std::vector<learned::RunGraph> LoadGraphs(const std::vector<std::string>& files, const TrainOptions& o,
                                          std::vector<std::string>& skipped) {
  std::vector<learned::RunGraph> graphs;
  std::map<std::string, std::string> seen;  // hash -> source
  for (const std::string& file : files) {
    if (o.load.training && o.with_inference) {
      GraphLoadOptions inference = o.load;
      inference.training = false;
      AddGraph(absl::StrCat(file, " (inference)"), LoadGraphFile(file, inference), graphs, seen, skipped);
      AddGraph(absl::StrCat(file, " (training step)"), LoadGraphFile(file, o.load), graphs, seen, skipped);
    } else {
      AddGraph(file, LoadGraphFile(file, o.load), graphs, seen, skipped);
    }
  }
  return graphs;
}

// The clusters; one that does not parse refuses the run (INVALID_ARGUMENT or NOT_FOUND naming it).
absl::StatusOr<std::vector<learned::RunTopology>> LoadTopologies(const TrainOptions& o) {
  std::vector<learned::RunTopology> out;
  for (const std::string& spec : o.devices) {
    absl::StatusOr<Topology> t = ParseTopologyShorthand(spec);
    if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("--devices '", spec, "': ", t.status().message()));
    out.push_back({spec, *std::move(t)});
  }
  for (const std::string& file : o.topologies) {
    absl::StatusOr<Topology> t = LoadTopologyFile(file);
    if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat("--topology ", file, ": ", t.status().message()));
    out.push_back({file, *std::move(t)});
  }
  if (out.empty())
    return absl::InvalidArgumentError("no cluster given: --devices SPEC[,SPEC...] or --topology FILE[,FILE...]");
  return out;
}

absl::StatusOr<learned::TrainingRunOptions> RunOptionsOf(const TrainOptions& o) {
  learned::TrainingRunOptions r;
  r.init = o.from_scratch ? "" : o.init.empty() ? learned::DefaultPolicyWeights() : o.init;
  if (o.from_scratch && !o.init.empty())
    return absl::InvalidArgumentError("--init and --from_scratch exclude each other");
  if (o.with_inference && !o.load.training) {
    return absl::InvalidArgumentError(
        "--with_inference adds the inference graphs to the training steps: give --training too");
  }
  r.out = o.out;
  r.validation_share = o.validation_share;
  if (!(o.validation_share >= 0 && o.validation_share < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("--validation_share ", o.validation_share, " is not in [0, 1)"));
  }
  r.seed = o.seed;
  absl::Duration limit;
  if (!absl::ParseDuration(o.time_limit, &limit) || limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--time_limit '", o.time_limit, "' is not a duration such as 30m"));
  }
  r.max_seconds = absl::ToDoubleSeconds(limit);
  if (r.max_seconds == 0 && o.iterations <= 0) return absl::InvalidArgumentError("--time_limit=0 needs --iterations");
  r.iterations = o.iterations;
  r.learning_rate = o.learning_rate;
  return r;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandGraphInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> in_folder;
      for (const fs::directory_entry& e : fs::directory_iterator(input, ec)) {
        if (e.is_regular_file(ec) && IsGraphFile(e.path())) in_folder.push_back(e.path().string());
      }
      std::sort(in_folder.begin(), in_folder.end());
      files.insert(files.end(), in_folder.begin(), in_folder.end());
    } else if (fs::exists(input, ec)) {
      files.push_back(input);
    } else {
      return absl::NotFoundError(absl::StrCat("'", input, "' is neither a graph file nor a folder"));
    }
  }
  if (files.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no graph files (.onnx, .json) in ", absl::StrJoin(inputs, ", ")));
  }
  return files;
}

absl::StatusOr<std::string> RunTrain(const TrainOptions& o) {
  absl::StatusOr<learned::TrainingRunOptions> run = RunOptionsOf(o);
  if (!run.ok()) return run.status();
  if (absl::Status s = learned::SetTorchThreads(o.threads); !s.ok()) return s;
  absl::StatusOr<std::vector<learned::RunTopology>> topologies = LoadTopologies(o);
  if (!topologies.ok()) return topologies.status();
  absl::StatusOr<std::vector<std::string>> files = ExpandGraphInputs(o.inputs);
  if (!files.ok()) return files.status();
  std::vector<std::string> skipped;
  std::vector<learned::RunGraph> graphs = LoadGraphs(*files, o, skipped);
  for (const std::string& s : skipped) std::cerr << "skipped " << s << "\n";
  if (graphs.empty())
    return absl::InvalidArgumentError(absl::StrCat("no graph could be read (", skipped.size(), " skipped)"));
  const TrainedGraphs described = DescribeGraphs(graphs);

  ProgressBar bar(o.progress_overwrite);
  run->on_iteration = [&bar](const learned::TrainerProgress& p) { bar.Update(p); };
  run->on_skipped = [&bar](const std::string& line) { bar.Note(absl::StrCat("skipped ", line)); };
  stop_requested.store(false);
  run->stop = &stop_requested;
  run->version = o.version;
  absl::StatusOr<learned::TrainingRunReport> report;
  {
    StopOnSignals signals;
    report = learned::RunTraining(graphs, *topologies, *run);
  }
  bar.Finish();
  if (!report.ok()) return report.status();
  report->skipped.insert(report->skipped.begin(), skipped.begin(), skipped.end());
  absl::StatusOr<TrainOutputs> outputs = WriteTrainOutputs(o, *run, *report, described, *topologies);
  if (!outputs.ok()) return outputs.status();
  return TrainSummary(*report, *outputs);
}

}  // namespace placement::cli

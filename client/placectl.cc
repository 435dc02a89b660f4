// placectl: the command line of the placement service. See kUsage below, or `placectl help`.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "client/bench_command.h"
#include "client/build_identity.h"
#include "client/command_flags.h"
#include "client/convert_commands.h"
#include "client/exit_codes.h"
#include "client/flag_values.h"
#include "client/lifecycle_commands.h"
#include "client/memory_command.h"
#include "client/place_command.h"
#include "client/transformer_command.h"
#include "client/remote_commands.h"
#include "client/server_channel.h"
#include "client/simulate_command.h"
#include "client/torch_commands.h"
#include "graph/device_presets.h"
#include "graph/measured_presets.h"
#include "policy/learned/learned_placer_info.h"
#include "policy/placer_families.h"

ABSL_FLAG(std::string, placement, "", "placement file: {\"assignment\": {op: device}} or a Tarnawski expert split");
ABSL_FLAG(std::string, topology, "",
          "cluster description file (JSON, see docs/topology.md); train: a comma list of them");
ABSL_FLAG(std::string, devices, "", "cluster shorthand, e.g. 4xA100 or 2x8xH100; train: a comma list of them");
ABSL_FLAG(std::string, objective, "",
          "step_time | throughput | latency (default: step_time; throughput for place's parallelism auto)");
ABSL_FLAG(std::string, cost_model, "default",
          "default | tarnawski | pipedream: how the objective is computed (tarnawski: latency as Tarnawski et al. "
          "define it; pipedream: plans scored by PipeDream's planner's formulas)");
ABSL_FLAG(std::string, output, "table", "table | json");
ABSL_FLAG(std::string, priority, "topological", "simulator queue priority: topological | upward_rank");
ABSL_FLAG(std::string, simulator, "default", "simulator constants: default | placeto");
ABSL_FLAG(bool, local, true, "simulate, place, algorithms: run in this process (unless --server is given)");
ABSL_FLAG(int64_t, batch, 0,
          "ONNX: batch size bound to the batch dimension (default 1); with place --parallelism auto (a training step "
          "on several devices) the global batch in samples, the graph bound to the micro-batch");
ABSL_FLAG(int64_t, seq, 0, "ONNX: length bound to dimensions named like a sequence (default 128)");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "ONNX: NAME=VALUE, repeatable: a dimension's symbol, or TENSOR:AXIS for a size the data decides");
ABSL_FLAG(bool, allow_unresolved_dims, false, "ONNX: count a dimension nothing resolves as 1, with a warning");
ABSL_FLAG(int32_t, num_data_inputs, -1, "ONNX: graph inputs without an initializer that are data (-1: decide)");
ABSL_FLAG(int64_t, loop_iterations, 0, "ONNX: iterations assumed for a Loop the data bounds (0: the default, 8)");
ABSL_FLAG(int64_t, max_unrolled_nodes, 0, "ONNX: a Loop or Scan unrolling past this stays one operator (0: 20000)");
ABSL_FLAG(
    std::string, costs, "",
    "measured per-operator times to use instead of the model's: JSON {op: {kind: seconds}} or CSV op,kind,seconds");
ABSL_FLAG(std::string, costs_kind, "*",
          "the device kind a PyTorch profiler trace given as --costs was recorded on (*: every kind)");
ABSL_FLAG(bool, training, false, "place one training step: backward ops, gradients and optimizer updates");
ABSL_FLAG(std::string, optimizer, "adam", "training: sgd | momentum | adam (its state is in memory)");
ABSL_FLAG(std::string, runtime, "eager",
          "how the step issues its operators: eager (one by one from the host thread, at the topology's host "
          "overheads) or graphs (CUDA graphs or a compiled step: no per-operator host work)");
ABSL_FLAG(std::string, precision, "fp32",
          "fp32 (PyTorch's defaults) | amp_bf16 | amp_fp16 (torch.autocast) | bf16 | fp16 (the model converted): "
          "the bytes of tensors, weights and optimizer state (docs/memory.md)");
ABSL_FLAG(double, backward_multiplier, 2.0, "training: backward work as a multiple of the forward work");
ABSL_FLAG(int32_t, threads, 1,
          "calibrate, train: the CPU threads LibTorch may use (calibrate: as the measured runs will)");
ABSL_FLAG(std::vector<std::string>, profiles, {},
          "calibrate: folders from scripts/profile_model.py whose measured operators refit the class efficiencies");
ABSL_FLAG(std::string, measurements, "",
          "calibrate: a device's measurements from scripts/measure_torch_device.py (e.g. run on a GPU) instead of "
          "timing this host; several files, comma-separated, of the same device: each figure the median of theirs");
ABSL_FLAG(std::string, save_measurements, "",
          "calibrate: also write what was measured, before any --profiles fit, for a later --measurements");
ABSL_FLAG(double, measure_seconds, 0.05, "calibrate: how long each benchmark layer is repeated, best of three");
ABSL_FLAG(std::string, kind, "cpu", "calibrate: the device kind written (what --costs_kind names)");
ABSL_FLAG(int32_t, ops, 1000, "generate: about this many operators");
ABSL_FLAG(uint64_t, seed, 1, "generate and place: the seed");
ABSL_FLAG(std::string, algorithm, "auto", "place: a placer from `placectl algorithms`, or auto");
ABSL_FLAG(std::string, deadline, "10s", "place: time the placer may take, e.g. 500ms, 2s, 1m");
ABSL_FLAG(std::string, parallelism, "",
          "place: auto (the default for a training step of an ONNX model on more than one device: data, pipeline, "
          "hybrid plans and operator placement compared at the global batch --batch, the fastest that fits; for a "
          "transformer's config.json, tensor, pipeline and data parallelism with ZeRO, recomputation and micro-batch "
          "size) | tensor (config.json: every GPU one tensor-parallel group) | "
          "operator (the default otherwise) | data | pipeline | hybrid (stages run data-parallel on device groups; "
          "--global_batch micro-batches); submit: operator | data | pipeline | hybrid (config.json: auto | "
          "tensor)");
ABSL_FLAG(std::string, plan, "",
          "a transformer's config.json, training: simulate: the plan to score, e.g. "
          "\"tp=8,pp=4,vpp=2,dp=2,mbs=1,zero=1,recompute=selective,sp=1,flash=0,overlap=1\"; place: the keys the "
          "search holds fixed (docs/transformer_plans.md); submit: those keys, for the server's search");
ABSL_FLAG(int64_t, micro_batch, 0,
          "place, submit, bench --parallelism auto (or its default): samples per micro-batch (a divisor of --batch); "
          "0: --batch over the devices");
ABSL_FLAG(std::string, schedule, "1f1b", "plans: 1f1b (PipeDream's) | gpipe (needs --global_batch)");
ABSL_FLAG(std::string, recompute, "none",
          "plans of a training step: none | full (each stage's forward in checkpointed segments, recomputed in the "
          "backward)");
ABSL_FLAG(std::string, sharding, "none",
          "plans of a training step: what each stage's data-parallel replicas split: none | zero1 (optimizer "
          "state) | zero2 (and gradients) | zero3 or fsdp (and weights)");
ABSL_FLAG(int64_t, global_batch, 0, "plans: micro-batches (runs of the graph) per optimizer step; 0: none");
ABSL_FLAG(std::string, policy_weights, "", "place, algorithms: the learned policy's weights (empty: the shipped ones)");
ABSL_FLAG(std::string, policy_device, "auto", "place, algorithms: where the policy runs: auto, cpu, cuda, or none");
ABSL_FLAG(bool, policy_fallback, false, "place, algorithms: when the weights cannot load, warn and go on without them");
ABSL_FLAG(int64_t, width, 512, "generate: hidden size or channels");
ABSL_FLAG(std::string, server, "", "host:port of a placement server (submit and bench default to 127.0.0.1:50051)");
ABSL_FLAG(bool, progress, false, "submit: print progress on stderr (always on when stderr is a terminal)");
ABSL_FLAG(std::string, chart, "", "place, simulate, submit: write the answer's schedule chart (HTML) to this file");
ABSL_FLAG(bool, skip_cache, false, "submit: compute afresh even when the server has the answer cached");
ABSL_FLAG(std::string, timeout, "30s", "simulate, algorithms, info, health with --server: how long a call may take");
ABSL_FLAG(int32_t, concurrency, 1, "bench: calls in flight");
ABSL_FLAG(std::string, duration, "10s", "bench: how long to run (unless --requests)");
ABSL_FLAG(int64_t, requests, 0, "bench: how many requests to send (0: run for --duration)");
ABSL_FLAG(double, unique_fraction, 0, "bench: share of requests made new to the cache (a fresh seed)");
ABSL_FLAG(bool, warmup, true, "bench: send each graph once, untimed, before measuring");

ABSL_DECLARE_FLAG(std::string, policy);  // lifecycle_commands.cc

namespace {

using placement::cli::ExitCodeFor;
using placement::cli::kExitOk;
using placement::cli::kExitUsage;

constexpr char kUsage[] =
    "placectl COMMAND [ARGS] [FLAGS]\n\n"
    "GRAPH is an ONNX model, a placement.graph/v1 JSON graph (docs/graph-format.md) or a Tarnawski JSON graph;\n"
    "with --training it is expanded into one training step, --batch and --seq bind an ONNX model's dimensions,\n"
    "--precision fp32|amp_bf16|amp_fp16|bf16|fp16 sets what its tensors, weights and optimizer state hold\n"
    "(docs/memory.md), --runtime eager|graphs how it issues its operators (eager: one by one from the host, at\n"
    "the topology's host overheads; graphs: CUDA graphs or a compiled step, docs/topology.md).\n"
    "ONNX options (docs/onnx.md): --dim NAME=VALUE (repeatable: a symbol, or TENSOR:AXIS for a size the data\n"
    "decides, as the warnings name them), --allow_unresolved_dims, --num_data_inputs N, --loop_iterations N,\n"
    "--max_unrolled_nodes N.\n"
    "--costs FILE (place, simulate, submit, import): measured per-operator times, JSON {op: {kind: seconds}} or\n"
    "CSV op,kind,seconds (kind \"*\": every device kind), or a PyTorch profiler trace from\n"
    "scripts/profile_model.py (--costs_kind KIND: the device kind it was recorded on); operators it does not name\n"
    "keep the model's estimate (docs/measured-costs.md).\n\n"
    "commands:\n"
    "  simulate GRAPH --placement FILE [--topology FILE | --devices SPEC] [--objective step_time|throughput|latency]\n"
    "                 [--cost_model default|tarnawski|pipedream] [--local] [--output table|json]\n"
    "                 [--priority topological|upward_rank] [--simulator default|placeto] [--chart schedule.html]\n"
    "      score a placement with the execution simulator (--cost_model tarnawski --objective latency: with\n"
    "      Tarnawski et al.'s latency model, docs/tarnawski-latency.md; pipedream --objective throughput: with\n"
    "      PipeDream's formulas, one replica per device)\n"
    "  place GRAPH [--algorithm NAME|auto] [--objective step_time|throughput|latency] [--cost_model ...]\n"
    "              [--deadline 10s]\n"
    "              [--topology FILE | --devices SPEC] [--local] [--output table|json] [--seed S]\n"
    "              [--policy_weights FILE] [--policy_device auto|cpu|cuda|none] [--policy_fallback]\n"
    "      place the graph (the JSON output is a placement file for simulate); the learned policy's placers\n"
    "      (policy, policy_iterative, policy_search) and AUTO with them need its weights, the shipped ones by default\n"
    "      plans (--objective throughput): [--parallelism operator|data|pipeline|hybrid] [--cost_model "
    "default|pipedream]\n"
    "      [--schedule 1f1b|gpipe] [--global_batch N]: stages of operators, each data-parallel on a group of devices\n"
    "      [--sharding none|zero1|zero2|zero3|fsdp]: what each stage's replicas split (training, with a global batch)\n"
    "      [--recompute none|full]: each stage's forward in checkpointed segments, recomputed in the backward\n"
    "      (docs/parallel-plans.md); AUTO weighs data, pipeline, operator placement and hybrid plans\n"
    "  memory GRAPH [--training --batch N [--optimizer adam]] [--topology FILE | --devices SPEC] [--output table|json]\n"
    "      what one step holds on one device (the cluster's first; default 1xH100): parameters, gradients,\n"
    "      optimizer state, the activations autograd saves, scratch, and the simulated peak against its capacity\n"
    "  algorithms\n"
    "      list the placers, the objectives they optimize and what they do\n"
    "  import GRAPH [--batch N] [--seq N] [--training]\n"
    "      print the graph in our JSON format (importer warnings go to stderr)\n"
    "  generate FAMILY [--ops N] [--seed S] [--batch N] [--width N] [--training]\n"
    "      print a synthetic graph: layered, nas_cells, blocks, fan_out, chain, branches or unet\n"
    "  presets\n"
    "      list the device presets and the published figures they use\n"
    "  calibrate [--threads N] [--kind KIND] [--output FILE] [--profiles DIR,...] [--measurements FILE,...]\n"
    "            [--save_measurements FILE]\n"
    "      measure this host with LibTorch (GEMM, memory, launch overhead, each operator class's share of the\n"
    "      roofline, forward and backward) and write a topology with one CPU device for --topology; with\n"
    "      --profiles, the classes profiled models spend time in take their efficiency from those profiles;\n"
    "      --measurements FILE: a device measured elsewhere (scripts/measure_torch_device.py on a GPU), or\n"
    "      what --save_measurements kept of an earlier calibration (refit with other profiles, nothing timed);\n"
    "      FILE,FILE...: timings of the same device in several spells, each figure the median of theirs\n"
    "  train GRAPH|FOLDER... (--devices SPEC[,SPEC...] | --topology FILE[,FILE...]) [--training [--with_inference]]\n"
    "              [--out policy.pt] [--init FILE | --from_scratch] [--time_limit 30m | --iterations N]\n"
    "              [--validation_share 0.2] [--seed S] [--threads N] [--version_name V] [--learning_rate R]\n"
    "      train the learned policy on your graphs (any format; a folder's .onnx and .json files) and clusters, from\n"
    "      the shipped weights by default; writes the weights and, beside them, a manifest (.json), the learning\n"
    "      curve (.tsv) and its chart (.svg). Ctrl-C stops it, keeping the best checkpoint (docs/learned-policy.md)\n"
    "  curve CURVE.tsv CHART.svg\n"
    "      draw a learning curve (train's or train_policy's TSV) as an SVG chart\n\n"
    "with a server (--server HOST:PORT; submit and bench default to 127.0.0.1:50051):\n"
    "  submit GRAPH [--server HOST:PORT] [--topology FILE | --devices SPEC] [--objective ...] [--cost_model ...]\n"
    "               [--algorithm NAME|auto]\n"
    "               [--deadline 10s] [--training --batch N] [--output table|json] [--chart schedule.html]\n"
    "               [--progress] [--skip_cache] [--policy NAME]\n"
    "               [--parallelism ... --schedule ... --global_batch N]\n"
    "      place the graph on the server (PlaceStream), with a progress line on a terminal; a transformer's\n"
    "      config.json with --training --batch N [--seq N] [--precision P] [--plan KEYS]: its training plan, shown\n"
    "      as place shows it\n"
    "  simulate GRAPH --placement FILE --server HOST:PORT ...   score on the server (Simulate)\n"
    "  algorithms --server HOST:PORT                            the server's placers\n"
    "  info [--server HOST:PORT] [--output table|json]          version, policy, device and limits\n"
    "  health [--server HOST:PORT]                              liveness and readiness (exit 5 when not ready)\n"
    "  reload [--server HOST:PORT] [--policy NAME] [--weights FILE]\n"
    "      swap the server's learned-policy weights without a restart (needs its admin token); without --weights it\n"
    "      re-reads its own files, as on SIGHUP\n"
    "  bench GRAPH... [--server HOST:PORT] [--concurrency N] [--duration 10s | --requests N]\n"
    "               [--unique_fraction F] [--policy NAME] [--output table|json]\n"
    "      load generator: latency percentiles, requests/s and errors by code\n"
    "  security, for every server command: --tls, --tls_ca FILE, --tls_cert FILE --tls_key FILE (mutual TLS),\n"
    "      --tls_server_name NAME, --token_file FILE (else $PLACEMENT_AUTH_TOKEN) for the bearer token\n\n"
    "every command takes only its own flags: any other is a usage error naming the command's flags\n\n"
    "exit codes: 0 ok, 1 internal error, 2 usage, 3 bad input, 4 infeasible (memory, deadline, a server limit),\n"
    "            5 server unavailable (cannot be reached, starting or stopping), 6 refused (token or certificate)\n";

std::string ServerOrDefault() {
  const std::string server = absl::GetFlag(FLAGS_server);
  return server.empty() ? placement::cli::kDefaultServer : server;
}

// --timeout, or a usage error.
absl::StatusOr<absl::Duration> CallTimeout() {
  return placement::cli::ParsePositiveDuration("timeout", absl::GetFlag(FLAGS_timeout));
}

// --dim given several times: absl keeps only the last value of a flag, so the occurrences are joined into one
// comma-separated list before parsing. `storage` owns the rewritten arguments.
std::vector<char*> JoinRepeatedDims(int argc, char** argv, std::vector<std::string>* storage) {
  std::vector<std::string> dims;
  std::vector<std::string> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--dim=", 0) == 0) {
      dims.push_back(arg.substr(6));
    } else if (arg == "--dim" && i + 1 < argc) {
      dims.push_back(argv[++i]);
    } else {
      rest.push_back(arg);
    }
  }
  *storage = std::move(rest);
  if (!dims.empty()) storage->push_back("--dim=" + absl::StrJoin(dims, ","));
  std::vector<char*> out;
  for (std::string& a : *storage) out.push_back(a.data());
  return out;
}

// The graph-reading flags; `dims` is --dim and `costs` the --costs file's text, both read by main.
placement::cli::GraphLoadOptions LoadOptions(const std::map<std::string, int64_t>& dims, const std::string& costs) {
  placement::cli::GraphLoadOptions o;
  o.costs_path = absl::GetFlag(FLAGS_costs);
  o.costs_text = costs;
  o.costs_kind = absl::GetFlag(FLAGS_costs_kind);
  o.batch = absl::GetFlag(FLAGS_batch);
  o.sequence_length = absl::GetFlag(FLAGS_seq);
  o.dims = dims;
  o.allow_unresolved_dims = absl::GetFlag(FLAGS_allow_unresolved_dims);
  o.num_data_inputs = absl::GetFlag(FLAGS_num_data_inputs);
  o.loop_iterations = absl::GetFlag(FLAGS_loop_iterations);
  o.max_unrolled_nodes = absl::GetFlag(FLAGS_max_unrolled_nodes);
  o.training = absl::GetFlag(FLAGS_training);
  o.optimizer = absl::GetFlag(FLAGS_optimizer);
  o.backward_multiplier = absl::GetFlag(FLAGS_backward_multiplier);
  o.precision = absl::GetFlag(FLAGS_precision);
  o.runtime = absl::GetFlag(FLAGS_runtime);
  return o;
}

// --objective, step_time where not given (place leaves it to the plan it makes).
std::string ObjectiveFlag() {
  const std::string given = absl::GetFlag(FLAGS_objective);
  return given.empty() ? "step_time" : given;
}

// The flags every placing command (place, submit, bench) shares.
template <typename Options>
void SetPlacingFlags(const std::map<std::string, int64_t>& dims, const std::string& costs, Options* o) {
  o->load = LoadOptions(dims, costs);
  o->topology_file = absl::GetFlag(FLAGS_topology);
  o->devices = absl::GetFlag(FLAGS_devices);
  o->algorithm = absl::GetFlag(FLAGS_algorithm);
  o->objective = ObjectiveFlag();
  o->cost_model = absl::GetFlag(FLAGS_cost_model);
  o->deadline = absl::GetFlag(FLAGS_deadline);
  o->output = absl::GetFlag(FLAGS_output);
  o->plan.parallelism = absl::GetFlag(FLAGS_parallelism);
  o->plan.schedule = absl::GetFlag(FLAGS_schedule);
  o->plan.sharding = absl::GetFlag(FLAGS_sharding);
  o->plan.recompute = absl::GetFlag(FLAGS_recompute);
  o->plan.global_batch = absl::GetFlag(FLAGS_global_batch);
  o->plan.micro_batch = absl::GetFlag(FLAGS_micro_batch);
}



int Fail(const std::string& command, const absl::Status& status) {
  std::cerr << "placectl " << command << ": " << status.message() << "\n";
  return ExitCodeFor(status);
}

int Print(const std::string& command, const absl::StatusOr<std::string>& out) {
  if (!out.ok()) return Fail(command, out.status());
  std::cout << *out;
  return kExitOk;
}

int Usage(const std::string& why) {
  std::cerr << "placectl: " << why << "\n\n" << kUsage;
  return kExitUsage;
}

// The --policy_* flags.
placement::cli::PolicyFlags PolicyFlagValues() {
  return placement::cli::PolicyFlags{absl::GetFlag(FLAGS_policy_weights), absl::GetFlag(FLAGS_policy_device),
                                     absl::GetFlag(FLAGS_policy_fallback)};
}

// The classical placers plus the learned ones when the policy is wanted and loads (in placectl-torch: this binary
// hands such commands over to it); `holder` keeps the registry alive.
absl::StatusOr<const placement::PlacerRegistry*> LoadRegistry(std::unique_ptr<placement::PlacerRegistry>& holder,
                                                              char** original_argv) {
  if (absl::GetFlag(FLAGS_policy_device) == "none") return &placement::DefaultPlacerRegistry();
  return placement::cli::LoadLearnedRegistry(PolicyFlagValues(), holder, original_argv);
}

// What a command reads besides its own flags: the words after it, and what main read once for every command.
struct Invocation {
  std::string command;
  std::vector<std::string> operands;    // the arguments after the command
  std::map<std::string, int64_t> dims;  // --dim, parsed
  std::string costs;                    // the --costs file's text ("" without --costs)
  char** argv;                          // the original command line, for commands handed over to placectl-torch
};

// A transformer's training plans (tp, pp, dp...): a config.json placed with --parallelism "", auto or tensor; an
// ONNX export with --parallelism tensor (its default stays the operator graph's plans).
bool UsesTransformerPlans(const std::string& path) {
  const std::string parallelism = absl::GetFlag(FLAGS_parallelism);
  if (!absl::GetFlag(FLAGS_training)) return false;
  if (parallelism == "tensor" && placement::cli::IsOnnxFile(path)) return true;
  const bool plans = parallelism.empty() || parallelism == "auto" || parallelism == "tensor";
  return plans && placement::cli::IsHfConfigFile(path);
}

enum class TransformerRun { kSimulate, kPlace };

// simulate --plan and place of a config.json: the layer-level plan model. The graph-level plan flags have their
// place in --plan; given here they would be ignored, so they are refused.
int TransformerCommand(const Invocation& in, TransformerRun what) {
  if (!placement::cli::IsHfConfigFile(in.operands[0]) && !placement::cli::IsOnnxFile(in.operands[0])) {
    return Fail(in.command, placement::UsageError(absl::StrCat(
                                "--plan describes a transformer's layers; ", in.operands[0],
                                " is not a Hugging Face config.json or an ONNX export of one (for other graphs use "
                                "--parallelism and --placement)")));
  }
  const std::pair<const char*, bool> graph_level[] = {
      {"sharding (say zero=1..3 in --plan)", absl::GetFlag(FLAGS_sharding) != "none"},
      {"recompute (say recompute=selective|full in --plan)", absl::GetFlag(FLAGS_recompute) != "none"},
      {"micro_batch (say mbs=N in --plan)", absl::GetFlag(FLAGS_micro_batch) != 0},
      {"global_batch (--batch is the global batch in sequences)", absl::GetFlag(FLAGS_global_batch) != 0},
      {"schedule (a transformer plan runs 1F1B, interleaved with vpp=N in --plan)",
       absl::GetFlag(FLAGS_schedule) != "1f1b"},
      {"placement (a transformer plan places whole layers)", !absl::GetFlag(FLAGS_placement).empty()},
      {"cost_model", absl::GetFlag(FLAGS_cost_model) != "default"},
      {"objective (a transformer plan is scored by its iteration time)", !absl::GetFlag(FLAGS_objective).empty()},
      {"server", !absl::GetFlag(FLAGS_server).empty()}};
  for (const auto& [flag, given] : graph_level) {
    if (given) {
      return Fail(in.command, placement::UsageError(absl::StrCat("--", flag, " does not apply to a transformer plan")));
    }
  }
  if (what == TransformerRun::kPlace && absl::GetFlag(FLAGS_algorithm) != "auto") {
    return Fail(in.command, placement::UsageError("--algorithm does not apply to a transformer plan (the plan search "
                                                  "is exhaustive)"));
  }
  placement::cli::TransformerCommandOptions o;
  o.config_path = in.operands[0];
  o.global_batch = absl::GetFlag(FLAGS_batch);
  o.seq = absl::GetFlag(FLAGS_seq);
  o.precision = absl::GetFlag(FLAGS_precision);
  o.topology_file = absl::GetFlag(FLAGS_topology);
  o.devices = absl::GetFlag(FLAGS_devices);
  o.plan = absl::GetFlag(FLAGS_plan);
  o.parallelism = absl::GetFlag(FLAGS_parallelism);
  o.deadline = absl::GetFlag(FLAGS_deadline);
  o.output = absl::GetFlag(FLAGS_output);
  o.chart_path = absl::GetFlag(FLAGS_chart);
  o.started = placement::cli::CommandStarted();
  return Print(in.command, what == TransformerRun::kSimulate ? placement::cli::RunTransformerSimulate(o)
                                                             : placement::cli::RunTransformerPlace(o));
}

int SimulateCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("simulate takes exactly one GRAPH");
  placement::cli::SimulateOptions o;
  o.graph_path = in.operands[0];
  o.load = LoadOptions(in.dims, in.costs);
  o.placement_path = absl::GetFlag(FLAGS_placement);
  o.topology_file = absl::GetFlag(FLAGS_topology);
  o.devices = absl::GetFlag(FLAGS_devices);
  o.objective = ObjectiveFlag();
  o.objective_given = !absl::GetFlag(FLAGS_objective).empty();
  o.cost_model = absl::GetFlag(FLAGS_cost_model);
  o.output = absl::GetFlag(FLAGS_output);
  o.priority = absl::GetFlag(FLAGS_priority);
  o.simulator = absl::GetFlag(FLAGS_simulator);
  o.chart_path = absl::GetFlag(FLAGS_chart);
  if (!absl::GetFlag(FLAGS_plan).empty()) return TransformerCommand(in, TransformerRun::kSimulate);
  if (absl::GetFlag(FLAGS_server).empty()) return Print(in.command, placement::cli::RunSimulate(o));
  absl::StatusOr<absl::Duration> timeout = CallTimeout();
  if (!timeout.ok()) return Fail(in.command, timeout.status());
  placement::cli::RemoteSimulateOptions r;
  r.simulate = o;
  r.server = absl::GetFlag(FLAGS_server);
  r.timeout = *timeout;
  return Print(in.command, placement::cli::RunRemoteSimulate(r));
}

int MemoryCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("memory takes exactly one GRAPH");
  placement::cli::MemoryOptions o;
  o.graph_path = in.operands[0];
  o.load = LoadOptions(in.dims, in.costs);
  o.topology_file = absl::GetFlag(FLAGS_topology);
  o.devices = absl::GetFlag(FLAGS_devices);
  o.output = absl::GetFlag(FLAGS_output);
  return Print(in.command, placement::cli::RunMemory(o));
}

int PlaceCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("place takes exactly one GRAPH");
  if (UsesTransformerPlans(in.operands[0]) || !absl::GetFlag(FLAGS_plan).empty()) {
    return TransformerCommand(in, TransformerRun::kPlace);
  }
  if (absl::GetFlag(FLAGS_parallelism) == "tensor") {
    return Fail(in.command, placement::UsageError("--parallelism tensor plans a transformer's training step: GRAPH "
                                                  "a Hugging Face config.json or an ONNX export of one, and "
                                                  "--training"));
  }
  placement::cli::PlaceOptions o;
  o.started = placement::cli::CommandStarted();
  o.graph_path = in.operands[0];
  SetPlacingFlags(in.dims, in.costs, &o);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.chart_path = absl::GetFlag(FLAGS_chart);
  // Left to the command where not given: what a training step on several devices defaults to differs.
  o.objective = absl::GetFlag(FLAGS_objective);
  // The policy's weights load only for the placers that use them.
  std::unique_ptr<placement::PlacerRegistry> holder;
  absl::StatusOr<const placement::PlacerRegistry*> registry = placement::learned::RunsLearnedPolicy(o.algorithm)
                                                                  ? LoadRegistry(holder, in.argv)
                                                                  : &placement::DefaultPlacerRegistry();
  if (!registry.ok()) return Print(in.command, absl::StatusOr<std::string>(registry.status()));
  o.registry = *registry;
  return Print(in.command, placement::cli::RunPlace(o));
}

int AlgorithmsCommand(const Invocation& in) {
  if (!in.operands.empty()) return Usage("algorithms takes no arguments");
  if (!absl::GetFlag(FLAGS_server).empty()) {
    absl::StatusOr<absl::Duration> timeout = CallTimeout();
    if (!timeout.ok()) return Fail(in.command, timeout.status());
    return Print(in.command, placement::cli::RunRemoteAlgorithms(absl::GetFlag(FLAGS_server), *timeout));
  }
  if (absl::GetFlag(FLAGS_policy_device) == "none") {
    std::cout << placement::cli::ListAlgorithms(&placement::DefaultPlacerRegistry());
    return kExitOk;
  }
  return Print(in.command, placement::cli::ListAlgorithmsWithPolicy(PolicyFlagValues()));
}

int SubmitCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("submit takes exactly one GRAPH");
  placement::cli::SubmitOptions o;
  o.policy = absl::GetFlag(FLAGS_policy);
  o.server = ServerOrDefault();
  o.graph_path = in.operands[0];
  SetPlacingFlags(in.dims, in.costs, &o);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.skip_cache = absl::GetFlag(FLAGS_skip_cache);
  // A terminal gets a progress line rewritten in place; elsewhere progress is asked for.
  o.progress_overwrite = ::isatty(STDERR_FILENO) != 0;
  o.progress = absl::GetFlag(FLAGS_progress) || o.progress_overwrite;
  o.chart_path = absl::GetFlag(FLAGS_chart);
  o.transformer_plan = absl::GetFlag(FLAGS_plan);
  return Print(in.command, placement::cli::RunSubmit(o));
}

// info and health: one call to the server each.
int ServerStatusCommand(const Invocation& in) {
  if (!in.operands.empty()) return Usage(in.command + " takes no arguments");
  absl::StatusOr<absl::Duration> timeout = CallTimeout();
  if (!timeout.ok()) return Fail(in.command, timeout.status());
  if (in.command == "health") return Print(in.command, placement::cli::RunHealth(ServerOrDefault(), *timeout));
  return Print(in.command, placement::cli::RunInfo(ServerOrDefault(), absl::GetFlag(FLAGS_output), *timeout));
}

int BenchCommand(const Invocation& in) {
  if (in.operands.empty()) return Usage("bench takes one or more GRAPHs");
  placement::cli::BenchOptions o;
  o.policy = absl::GetFlag(FLAGS_policy);
  o.server = ServerOrDefault();
  o.graph_paths = in.operands;
  SetPlacingFlags(in.dims, in.costs, &o);
  o.concurrency = absl::GetFlag(FLAGS_concurrency);
  o.duration = absl::GetFlag(FLAGS_duration);
  o.requests = absl::GetFlag(FLAGS_requests);
  o.unique_fraction = absl::GetFlag(FLAGS_unique_fraction);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  return Print(in.command, placement::cli::RunBench(o));
}

int ImportCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("import takes exactly one GRAPH");
  std::vector<std::string> warnings;
  absl::StatusOr<std::string> out =
      placement::cli::RunImport(in.operands[0], LoadOptions(in.dims, in.costs), &warnings);
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  return Print(in.command, out);
}

int GenerateCommand(const Invocation& in) {
  if (in.operands.size() != 1) return Usage("generate takes exactly one FAMILY");
  placement::cli::GenerateOptions o;
  o.family = in.operands[0];
  o.ops = absl::GetFlag(FLAGS_ops);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.batch = absl::GetFlag(FLAGS_batch) > 0 ? absl::GetFlag(FLAGS_batch) : 32;
  o.width = absl::GetFlag(FLAGS_width);
  o.training = absl::GetFlag(FLAGS_training);
  return Print(in.command, placement::cli::RunGenerate(o));
}

int CalibrateCommand(const Invocation& in) {
  if (!in.operands.empty()) return Usage("calibrate takes no arguments");
  placement::cli::CalibrateOptions o;
  o.threads = absl::GetFlag(FLAGS_threads);
  o.kind = absl::GetFlag(FLAGS_kind);
  o.profiles = absl::GetFlag(FLAGS_profiles);
  o.measurements = absl::GetFlag(FLAGS_measurements);
  o.save_measurements = absl::GetFlag(FLAGS_save_measurements);
  o.seconds_per_measurement = absl::GetFlag(FLAGS_measure_seconds);
  // --output is shared with the commands that print: its "table" and "json" mean "print" here.
  const std::string output = absl::GetFlag(FLAGS_output);
  o.output = output == "table" || output == "json" ? "" : output;
  return Print(in.command, placement::cli::RunCalibrateCommand(o, in.argv));
}

int PresetsCommand(const Invocation& in) {
  if (!in.operands.empty()) return Usage("presets takes no arguments");
  std::cout << placement::DescribeDevicePresets() << "\n" << placement::DescribePresetRates();
  return kExitOk;
}

int HelpCommand(const Invocation&) {
  std::cout << kUsage;
  return kExitOk;
}

// The commands this file runs; train, curve and reload are lifecycle_commands.h's.
using CommandRunner = int (*)(const Invocation&);
const std::map<std::string, CommandRunner>& Commands() {
  static const auto* commands = new std::map<std::string, CommandRunner>{
      {"simulate", SimulateCommand},   {"place", PlaceCommand},       {"memory", MemoryCommand},       {"algorithms", AlgorithmsCommand},
      {"submit", SubmitCommand},       {"info", ServerStatusCommand}, {"health", ServerStatusCommand},
      {"bench", BenchCommand},         {"import", ImportCommand},     {"generate", GenerateCommand},
      {"calibrate", CalibrateCommand}, {"presets", PresetsCommand},   {"help", HelpCommand}};
  return *commands;
}

int RunCommand(const Invocation& in) {
  const auto found = Commands().find(in.command);
  if (found != Commands().end()) return found->second(in);
  if (std::optional<int> code =
          placement::cli::RunLifecycleCommand(in.command, in.operands, LoadOptions(in.dims, in.costs), in.argv)) {
    return *code;
  }
  return Usage("unknown command '" + in.command + "'");
}

}  // namespace

namespace placement::cli {

absl::Time CommandStarted() {
  static const absl::Time started = [] {
    const absl::Time now = absl::Now();
    const char* handed = std::getenv(kCommandStartedEnv);
    int64_t nanos = 0;
    const bool valid = handed != nullptr && absl::SimpleAtoi(handed, &nanos);
    ::unsetenv(kCommandStartedEnv);  // not for the programs this one starts
    // An exec takes well under a minute: an older or future time was not handed over by this command.
    const absl::Time then = absl::FromUnixNanos(nanos);
    return valid && then <= now && now - then < absl::Minutes(1) ? then : now;
  }();
  return started;
}

}  // namespace placement::cli

int main(int argc, char** argv) {
  placement::cli::CommandStarted();  // the command's clock starts here, or where placectl handed it over
  if (const absl::Status same = placement::cli::CheckHandedOverBuild(argv[0]); !same.ok()) {
    std::cerr << "placectl: " << same.message() << "\n";
    return placement::cli::ExitCodeFor(same);
  }
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> joined;
  std::vector<char*> rewritten = JoinRepeatedDims(argc, argv, &joined);
  // Before absl parses them: its own report of an unknown flag or a value of the wrong type exits 1 and suggests
  // nothing.
  absl::Status parses = placement::cli::CheckFlagsKnown(argc, argv);
  if (parses.ok()) parses = placement::cli::CheckValuesTyped(argc, argv);
  if (!parses.ok()) {
    std::cerr << "placectl: " << parses.message() << "\n";
    return kExitUsage;
  }
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(rewritten.size()), rewritten.data());
  if (args.size() < 2) return Usage("no command given");
  absl::StatusOr<std::map<std::string, int64_t>> dims = placement::cli::ParseDims(absl::GetFlag(FLAGS_dim));
  if (!dims.ok()) return Usage(std::string(dims.status().message()));
  Invocation in{args[1], std::vector<std::string>(args.begin() + 2, args.end()), *std::move(dims), "", argv};
  absl::Status s = placement::cli::CheckFlagsApply(in.command, argc, argv);
  if (s.ok()) s = placement::cli::CheckValuesValid(in.command, argc, argv);
  if (!s.ok()) {
    std::cerr << "placectl " << in.command << ": " << s.message() << "\n";
    return kExitUsage;
  }
  if (!absl::GetFlag(FLAGS_costs).empty()) {
    absl::StatusOr<std::string> text =
        placement::cli::ReadCostsFile(absl::GetFlag(FLAGS_costs), absl::GetFlag(FLAGS_costs_kind));
    if (!text.ok()) return Fail(in.command, text.status());
    in.costs = *std::move(text);
  }
  return RunCommand(in);
}

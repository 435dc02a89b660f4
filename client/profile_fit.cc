#include "client/profile_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/calibration.h"
#include "graph/canonical.h"
#include "graph/cost_model.h"
#include "graph/file_io.h"
#include "graph/module_map.h"
#include "graph/onnx/onnx_import.h"
#include "graph/status_macros.h"
#include "graph/torch_trace.h"
#include "graph/training.h"
#include "graph/units.h"

namespace placement::cli {
namespace {

// One profiled operator: its class, its roofline time on the device and its measured time.
struct ProfiledOp {
  int op_class;
  double roofline;
  double seconds;
  double bytes;
};

constexpr double kMinProfiledSeconds = 1e-6;
// Below this an operator's weight in the fit stops growing: the profiler's own cost per range is of this order.
constexpr double kFitFloorSeconds = 20e-6;

// Classes holding at least kMinProfiledShare of the profiled time take the profiles' efficiency.
constexpr double kMinProfiledShare = 0.005;

// A training step profiled: its training graph, the forward operators the trace timed, and what it measured
// of the rest by class family (graph/op_class.h BackwardFamily): the autograd functions of the backward, and
// under kOptimizer the optimizer's step and zero_grad with the gradients' accumulation into .grad.
struct TrainingProfile {
  Graph step;  // forward, backward and the optimizer's updates
  std::vector<std::pair<OpId, double>> forward;
  std::array<double, kNumOpClasses> seconds{};
};

// An operator of a model's inference profiles: what the fit reads of it, and its time in each round.
struct OpRounds {
  ProfiledOp op;
  std::vector<double> seconds;
};
// One model's inference profiles (folders with the same graph, recorded in several rounds), by operator name.
using ModelRounds = std::map<std::string, OpRounds>;

// What the profile folders hold, by what it fits.
struct Profiles {
  std::map<std::string, ModelRounds> inference;  // by the graph's hash (graph/canonical.h GraphHash)
  std::vector<TrainingProfile> training;         // the training steps
};

// Each operator once per model, at the median of its rounds' times: a round recorded while the host ran slow
// (densenet121's batch-1 convolutions on two threads took 84.5 ms of one round and 42.1 ms of another) then moves
// the fit no more than a fast one. A model profiled once is taken as it is.
std::vector<ProfiledOp> MedianOverRounds(const Profiles& profiles) {
  std::vector<ProfiledOp> ops;
  for (const auto& [model, rounds] : profiles.inference) {
    for (const auto& [name, op] : rounds) {
      ops.push_back(op.op);
      ops.back().seconds = MedianRatio(op.seconds);
    }
  }
  return ops;
}

// The module scopes that hold other modules (graph/module_map.h ModuleScopeOf): an operator directly in one (a
// DenseNet layer's concatenation, a shufflenet block's channel shuffle, a residual block's Add) is timed together
// with the container's own Python forward code, which is no kernel's. Fitted as kernels, DenseNet's
// concatenations made every copy 4 to 9 times slower than the calibration's benchmarks measured.
std::set<std::string> ContainerScopes(const Graph& g) {
  std::set<std::string> containers;
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const std::optional<std::string> scope = ModuleScopeOf(g.name(op));
    if (!scope || scope->empty()) continue;
    containers.insert("");  // the model itself
    for (size_t dot = scope->find('.'); dot != std::string::npos; dot = scope->find('.', dot + 1)) {
      containers.insert(scope->substr(0, dot));
    }
  }
  return containers;
}

absl::Status AddProfile(const std::string& folder, const Device& d, Profiles* profiles) {
  absl::StatusOr<OnnxImportResult> model = ImportOnnxFile(folder + "/model.onnx", OnnxImportOptions{});
  if (!model.ok()) return model.status();
  absl::StatusOr<std::string> text = ReadWholeFile(folder + "/trace.json");
  if (!text.ok()) return text.status();
  absl::StatusOr<ModuleTimes> trace = ParseTorchTrace(*text);
  if (!trace.ok()) return absl::InvalidArgumentError(absl::StrCat(folder, "/trace.json: ", trace.status().message()));
  const Graph& g = model->problem.graph;
  std::vector<std::string> warnings;
  const MeasuredCosts costs = MatchModuleTimes(g, *trace, "*", &warnings);
  const bool is_training = !trace->backward_seconds.empty();
  TrainingProfile profile;
  ModelRounds* rounds = is_training ? nullptr : &profiles->inference[GraphHash(g)];
  const std::set<std::string> containers = is_training ? std::set<std::string>() : ContainerScopes(g);
  for (const auto& [name, times] : costs.times) {
    // An operator that shares its module with others gets a share of the module's time by FLOPs; one without
    // FLOPs beside ones with them gets none, which says nothing of its cost.
    if (times[0].second < kMinProfiledSeconds) continue;
    const OpId op = g.FindOp(name);
    if (is_training) {  // a training forward (batch statistics, saved activations) is not an inference one
      profile.forward.emplace_back(op, times[0].second);
      continue;
    }
    const OpClass c = ClassOf(g, op);
    // A view's time in eager PyTorch is its dispatch (or a copy of a strided input), not a bandwidth on its
    // bytes: read as one, the 0.56 ms that resnet18's one timed Flatten took made every view 1000 times slower
    // than a copy. Views keep the benchmarks' figure and pay no overhead (graph/cost_model.h).
    if (c == OpClass::kView) continue;
    const std::optional<std::string> scope = ModuleScopeOf(name);
    if (scope && containers.count(*scope) > 0) continue;
    OpRounds& rounds_of_op = (*rounds)[name];
    rounds_of_op.op = ProfiledOp{static_cast<int>(c), ClassRooflineSeconds(c, g.flops(op), g.bytes_accessed(op), d), 0,
                                 g.bytes_accessed(op)};
    rounds_of_op.seconds.push_back(times[0].second);
  }
  if (!is_training) return absl::OkStatus();
  absl::StatusOr<Graph> step = BuildTrainingGraph(g);  // forward operators keep their ids
  if (!step.ok()) return step.status();
  profile.step = *std::move(step);
  for (const auto& [function, seconds] : trace->backward_seconds) {
    profile.seconds[static_cast<int>(FamilyOfAutogradFunction(function))] += seconds;
  }
  profile.seconds[static_cast<int>(OpClass::kOptimizer)] += trace->optimizer_seconds;
  profiles->training.push_back(std::move(profile));
  return absl::OkStatus();
}

// What the profiled training steps measured, and what the model at factor 1 says of the same work, by family.
struct TrainingBalance {
  // By the operators' own class: roofline / forward efficiency of the backward and update operators.
  std::array<double, kNumOpClasses> modelled{};
  // By family: measured less the launch overheads the model adds whatever the factor, and as the traces have it.
  std::array<double, kNumOpClasses> measured{};
  std::array<double, kNumOpClasses> spent{};

  double ModelledFamily(OpClass family) const {
    double sum = 0;
    for (int k = 0; k < kNumOpClasses; ++k) sum += BackwardFamily(static_cast<OpClass>(k)) == family ? modelled[k] : 0;
    return sum;
  }
};

// The training forward's time beyond what the fitted forward efficiencies give is charged to the family's
// backward operators: eager PyTorch's training forward computes batch statistics and keeps activations, which
// the forward operators, shared with inference, do not model.
TrainingBalance BalanceOfStep(const TrainingProfile& p, const Device& d) {
  TrainingBalance b;
  for (const auto& [op, seconds] : p.forward) {
    const OpClass c = ClassOf(p.step, op);
    if (c == OpClass::kView) continue;
    b.measured[static_cast<int>(BackwardFamily(c))] += seconds - ModelledSeconds(p.step, op, d);
  }
  for (OpId op = 0; op < p.step.num_ops(); ++op) {
    const OpClass c = ClassOf(p.step, op);
    if (!IsBackwardType(p.step.op_type(op)) && c != OpClass::kOptimizer) continue;
    if (c == OpClass::kWideThinConv || c == OpClass::kChannelsLastThinConv) {
      // The trace files a wide or channels-last convolution's backward with the other convolutions'
      // (ConvolutionBackward0), while the benchmarks' factor holds for it: its modelled time is taken out of what
      // the conv family measured.
      b.measured[static_cast<int>(OpClass::kConv)] -= ModelledSeconds(p.step, op, d);
      continue;
    }
    const double roofline = ClassRooflineSeconds(c, p.step.flops(op), p.step.bytes_accessed(op), d);
    b.modelled[static_cast<int>(c)] += roofline / d.efficiency[static_cast<int>(c)];
    b.measured[static_cast<int>(BackwardFamily(c))] -= BeyondRooflineSeconds(c, p.step.bytes_accessed(op), d);
  }
  for (int c = 0; c < kNumOpClasses; ++c) b.measured[c] += p.seconds[c], b.spent[c] += p.seconds[c];
  return b;
}

// The profiled steps' balances, each scaled to one second of measured backward and updates: every step counts
// alike, so that one long step (a large model at a large batch, or one recorded while the host was slower) does
// not set the factors for all. Steps with nothing measured are left out.
std::vector<TrainingBalance> StepBalances(const std::vector<TrainingProfile>& profiles, const Device& d) {
  std::vector<TrainingBalance> steps;
  for (const TrainingProfile& p : profiles) {
    TrainingBalance b = BalanceOfStep(p, d);
    double spent = 0;
    for (double s : b.spent) spent += s;
    if (spent <= 0) continue;
    for (int c = 0; c < kNumOpClasses; ++c) {
      b.modelled[c] /= spent, b.measured[c] /= spent, b.spent[c] /= spent;
    }
    steps.push_back(b);
  }
  return steps;
}

TrainingBalance SumOf(const std::vector<TrainingBalance>& steps) {
  TrainingBalance sum;
  for (const TrainingBalance& b : steps) {
    for (int c = 0; c < kNumOpClasses; ++c) {
      sum.modelled[c] += b.modelled[c], sum.measured[c] += b.measured[c], sum.spent[c] += b.spent[c];
    }
  }
  return sum;
}

// A family's factor (the work the model counts over the time measured) as each step that spent enough of its
// time there gives it, the median of those: a step recorded while the host or its allocator misbehaved (under
// the profiler, a large model's Adam step took 0.26 s in one step and 1.2 s in the next) does not move the
// factor. 0 where no step spent enough there.
double MedianStepFactor(const std::vector<TrainingBalance>& steps, OpClass family) {
  std::vector<double> factors;
  const int f = static_cast<int>(family);
  for (const TrainingBalance& b : steps) {  // each scaled to one second spent
    const double modelled = b.ModelledFamily(family);
    if (b.spent[f] < kMinProfiledShare || modelled < kMinProfiledShare) continue;
    factors.push_back(modelled / std::max(b.measured[f], 0.1 * b.spent[f]));
  }
  return MedianRatio(std::move(factors));
}

// Each class family's backward factor from the profiled training steps; the optimizer's efficiency they give is
// reported only. Families with too little measured time keep the benchmarks' figure. Called after ApplyFit, so that the
// forward efficiencies and overhead are the fitted ones.
std::string FitTraining(const std::vector<TrainingProfile>& profiles, Device* d) {
  if (profiles.empty()) return "";
  const std::vector<TrainingBalance> steps = StepBalances(profiles, *d);
  const TrainingBalance b = SumOf(steps);
  double total = 0;  // one per step with a measured backward: the weights StepBalances gave
  for (double s : b.spent) total += s;
  double seconds = 0;
  for (const TrainingProfile& p : profiles) {
    for (double s : p.seconds) seconds += s;
  }
  std::string out =
      absl::StrFormat("training fitted on %d profiled step(s) (backward and updates %s per step):", profiles.size(),
                      FormatSeconds(seconds / static_cast<double>(profiles.size())));
  // A family the model gives almost no work to says nothing of its kernels' speed, however long it took.
  const double enough = kMinProfiledShare * total;
  for (int family = 0; family < kNumOpClasses; ++family) {
    const OpClass c = static_cast<OpClass>(family);
    const double modelled = b.ModelledFamily(c);
    if (c == OpClass::kView || b.spent[family] < enough || modelled < enough) continue;
    const double median = MedianStepFactor(steps, c);
    const double factor =
        ClampEfficiency(median > 0 ? median : modelled / std::max(b.measured[family], 0.1 * b.spent[family]));
    if (c == OpClass::kOptimizer) {
      // Reported, not applied: profiled updates run 1.2 to 3 times as long as unprofiled ones (at batch 1 on one
      // thread, densenet121's 35 ms against 25, vgg11_bn's 0.98 s against 0.33 s): each of Adam's nine or so
      // operators per parameter tensor records ranges, and the profiler's records push large temporaries onto
      // fresh pages. The benchmark's update, timed without the profiler, pays neither.
      absl::StrAppendFormat(&out, " optimizer %.3g kept (the profiles %.3g),", d->efficiency[family],
                            ClampEfficiency(factor * d->efficiency[family]));
      continue;
    }
    absl::StrAppendFormat(&out, " %s backward %.3g (benchmarks %.3g),", OpClassName(c), factor,
                          d->backward_efficiency[family]);
    // The family's classes the profiles had enough of (thin GEMMs alone, say); the others keep the benchmarks'.
    for (int k = 0; k < kNumOpClasses; ++k) {
      if (BackwardFamily(static_cast<OpClass>(k)) == c && b.modelled[k] >= enough) {
        d->backward_efficiency[k] = factor;
      }
    }
  }
  out.back() = '\n';
  return out;
}

// A class's operators, beyond the device's overhead: seconds ~ roofline x slowdown + bytes / serial_bandwidth.
struct ClassLine {
  double slowdown;
  double serial_bandwidth;  // 0: none
};

// Below this many operators, or rooflines and bytes this close to proportional, the two terms are not told
// apart: the class keeps the slowdown of the shared fit and no serial bandwidth.
constexpr int kMinOpsForSerialBandwidth = 8;
constexpr double kMinIndependence = 0.1;  // 1 - the weighted correlation (uncentred) of rooflines and bytes, squared

// The class's slowdown and serial bandwidth by least squares weighted as ApplyFit's, on what its operators took
// beyond the device's `overhead`. oneDNN's convolutions on this 2-core host move their bytes at 8 to 10 GB/s
// on top of their arithmetic (resnet18's 3x3 convolutions over 64 channels at batch 1 in 1.45 ms, at batch 8 in
// 9.2 ms, on two threads; its last layers, 9.4 MB of weights each, 2.3 ms at batch 1): a constant per operator
// fitted the same profiles worse and carried over to unseen models worse still. Where either coefficient comes
// out not positive the class has no such term: `shared` is kept.
ClassLine FitSerialBandwidth(const std::vector<ProfiledOp>& ops, int c, double overhead, double shared) {
  double wrr = 0, wrb = 0, wbb = 0, wry = 0, wby = 0;  // weighted sums of products of roofline, bytes, seconds
  int n = 0;
  for (const ProfiledOp& op : ops) {
    if (op.op_class != c) continue;
    const double w = 1 / std::max(op.seconds, kFitFloorSeconds), y = op.seconds - overhead;
    wrr += w * op.roofline * op.roofline, wrb += w * op.roofline * op.bytes, wbb += w * op.bytes * op.bytes;
    wry += w * op.roofline * y, wby += w * op.bytes * y;
    ++n;
  }
  const double det = wrr * wbb - wrb * wrb;
  if (n < kMinOpsForSerialBandwidth || !(det > kMinIndependence * wrr * wbb)) return {shared, 0};
  const double slowdown = (wbb * wry - wrb * wby) / det, seconds_per_byte = (wrr * wby - wrb * wry) / det;
  if (!(slowdown > 0) || !(seconds_per_byte > 0)) return {shared, 0};
  return {std::clamp(slowdown, 1e-3, 1e3), 1 / seconds_per_byte};
}

// Fits seconds ~ overhead + roofline x slowdown[class] over the profiled operators, by least squares weighted by
// 1 / seconds (so that the many small operators, where the overhead shows, count beside the few large ones):
// alternately each class's slowdown with the overhead fixed and the overhead with the slowdowns fixed, both in
// closed form. Classes with too little profiled time keep their benchmark efficiency.
std::string ApplyFit(const std::vector<ProfiledOp>& ops, Device* d) {
  std::array<double, kNumOpClasses> time{}, slowdown{};
  double total = 0;
  for (const ProfiledOp& op : ops) time[op.op_class] += op.seconds, total += op.seconds;
  std::array<bool, kNumOpClasses> fitted{};
  for (int c = 0; c < kNumOpClasses; ++c) {
    fitted[c] = total > 0 && time[c] >= kMinProfiledShare * total;
    slowdown[c] = 1 / d->efficiency[c];
  }
  double overhead = d->launch_overhead;
  for (int round = 0; round < 100; ++round) {
    std::array<double, kNumOpClasses> num{}, den{};
    for (const ProfiledOp& op : ops) {
      const double w = 1 / std::max(op.seconds, kFitFloorSeconds);
      num[op.op_class] += w * op.roofline * (op.seconds - overhead);
      den[op.op_class] += w * op.roofline * op.roofline;
    }
    for (int c = 0; c < kNumOpClasses; ++c) {
      if (fitted[c] && den[c] > 0)
        slowdown[c] = std::clamp(num[c] / den[c], 1e-3, 1e3);  // ClampEfficiency's range, as 1/efficiency
    }
    double residual = 0, weight = 0;
    for (const ProfiledOp& op : ops) {
      const double w = 1 / std::max(op.seconds, kFitFloorSeconds);
      residual += w * (op.seconds - op.roofline * slowdown[op.op_class]);
      weight += w;
    }
    overhead = weight > 0 ? std::max(residual / weight, 0.0) : overhead;
  }
  std::string out =
      absl::StrFormat("fitted on %d profiled operators (%s): overhead %s per operator (benchmark %s),", ops.size(),
                      FormatSeconds(total), FormatSeconds(overhead), FormatSeconds(d->launch_overhead));
  d->launch_overhead = overhead;
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (!fitted[c]) continue;
    const ClassLine line = FitSerialBandwidth(ops, c, overhead, slowdown[c]);
    absl::StrAppendFormat(
        &out, " %s %.3g (benchmarks %.3g)%s,", OpClassName(static_cast<OpClass>(c)), 1 / line.slowdown,
        d->efficiency[c],
        line.serial_bandwidth > 0 ? absl::StrCat(" and its bytes at ", FormatBandwidth(line.serial_bandwidth)) : "");
    d->efficiency[c] = 1 / line.slowdown;
    d->serial_bandwidth[c] = line.serial_bandwidth;
  }
  out.back() = '\n';
  return out;
}

}  // namespace

absl::StatusOr<std::string> FitToProfiles(const std::vector<std::string>& folders, Device* device) {
  Profiles profiles;
  for (const std::string& folder : folders) RETURN_IF_ERROR(AddProfile(folder, *device, &profiles));
  // In this order: the training factors are relative to the fitted forward efficiencies and overhead.
  std::string out = ApplyFit(MedianOverRounds(profiles), device);
  absl::StrAppend(&out, FitTraining(profiles.training, device));
  return out;
}

}  // namespace placement::cli

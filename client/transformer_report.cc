#include "client/transformer_report.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "client/chart/pipeline_chart.h"
#include "absl/strings/str_format.h"
#include "graph/units.h"

namespace placement::cli {
namespace {

using transformer::LayerRecomputeName;
using transformer::TransformerPlanResult;

std::string Bytes(double b) { return FormatBytes(b); }

std::string ModelLine(const TransformerAnswer& a) {
  const TransformerSpec& s = *a.spec;
  return absl::StrFormat("%s: %d layers, hidden %d, %d heads (%d key/value), %.2fB parameters; seq %d, global batch "
                         "%d sequences, %s",
                         s.model_type, s.layers, s.hidden, s.heads, s.kv_heads, ParameterCount(s) / 1e9, a.run->seq,
                         a.run->global_batch, a.precision);
}

std::string TimeLine(const TransformerPlanResult& r) {
  const transformer::IterationParts& p = r.parts;
  return absl::StrCat("forward ", FormatSeconds(p.forward), ", backward ", FormatSeconds(p.backward), ", recompute ",
                      FormatSeconds(p.recompute), ", tensor parallel ", FormatSeconds(p.tensor_parallel),
                      ", pipeline sends ", FormatSeconds(p.pipeline_send), ", bubble ",
                      FormatSeconds(p.pipeline_bubble), ", data parallel (exposed) ", FormatSeconds(p.data_parallel),
                      ", optimizer ", FormatSeconds(p.optimizer));
}

std::string MemoryLine(const TransformerPlanResult& r) {
  const transformer::GpuMemory& m = r.memory;
  return absl::StrCat(Bytes(m.total()), " per GPU of ", Bytes(r.memory_capacity), r.fits ? " (fits)" : " (DOES NOT FIT)",
                      ": parameters ", Bytes(m.parameters), ", gradients ", Bytes(m.gradients), ", optimizer ",
                      Bytes(m.optimizer), ", activations ", Bytes(m.activations), ", workspace ", Bytes(m.workspace));
}

nlohmann::ordered_json PlanJson(const transformer::TransformerPlan& p) {
  return {{"tp", p.tp},
          {"pp", p.pp},
          {"vpp", p.vpp},
          {"dp", p.dp},
          {"mbs", p.micro_batch},
          {"zero", p.zero},
          {"recompute", std::string(LayerRecomputeName(p.recompute))},
          {"sp", p.sequence_parallel},
          {"flash", p.flash_attention},
          {"overlap", p.overlap_gradient_reduce},
          {"text", transformer::TransformerPlanString(p)}};
}

nlohmann::ordered_json MemoryJson(const TransformerPlanResult& r) {
  const transformer::GpuMemory& m = r.memory;
  auto bytes = [](double b) { return static_cast<int64_t>(b); };
  return {{"parameters", bytes(m.parameters)}, {"gradients", bytes(m.gradients)},
          {"optimizer", bytes(m.optimizer)},   {"activations", bytes(m.activations)},
          {"workspace", bytes(m.workspace)},   {"total", bytes(m.total())},
          {"capacity", bytes(r.memory_capacity)}, {"fits", r.fits}};
}

nlohmann::ordered_json ResultJson(const TransformerPlanResult& r) {
  nlohmann::ordered_json j;
  j["plan"] = PlanJson(r.plan);
  j["micro_batches"] = r.micro_batches;
  j["step_time"] = r.iteration_seconds;
  j["samples_per_second"] = r.samples_per_second;
  j["tokens_per_second"] = r.tokens_per_second;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  const transformer::IterationParts& p = r.parts;
  j["time"] = {{"forward", p.forward},
               {"backward", p.backward},
               {"recompute", p.recompute},
               {"tensor_parallel", p.tensor_parallel},
               {"pipeline_send", p.pipeline_send},
               {"pipeline_bubble", p.pipeline_bubble},
               {"data_parallel", p.data_parallel},
               {"optimizer", p.optimizer}};
  j["memory"] = MemoryJson(r);
  j["peak_memory"] = static_cast<int64_t>(r.memory.total());
  j["communication"] = nlohmann::ordered_json::array();
  for (const transformer::CommunicationVolume& c : r.communication) {
    j["communication"].push_back({{"kind", c.kind}, {"link", c.link}, {"bytes", c.bytes}, {"seconds", c.seconds}});
  }
  return j;
}

}  // namespace

std::string TransformerTable(const TransformerAnswer& a) {
  const TransformerPlanResult& r = *a.result;
  std::string out = absl::StrCat("model       ", ModelLine(a), "\n");
  absl::StrAppend(&out, "cluster     ", a.cluster->name, " (", a.cluster->devices(), " GPUs, ", a.cluster->per_host,
                  " per host, ", a.cluster->device.kind, ")\n");
  absl::StrAppend(&out, "plan        ", transformer::TransformerPlanString(r.plan), " (", r.micro_batches,
                  " micro-batches per pipeline)\n");
  absl::StrAppend(&out, absl::StrFormat("iteration   %s   %.1f samples/s   %.0f tokens/s   MFU %.1f%%   HFU %.1f%%\n",
                                        FormatSeconds(r.iteration_seconds), r.samples_per_second, r.tokens_per_second,
                                        100 * r.mfu, 100 * r.hfu));
  absl::StrAppend(&out, "time        ", TimeLine(r), "\n");
  absl::StrAppend(&out, "memory      ", MemoryLine(r), "\n");
  for (const transformer::CommunicationVolume& c : r.communication) {
    absl::StrAppend(&out, "comm        ", c.kind, " over ", c.link, ": ", Bytes(c.bytes), " per GPU, ",
                    FormatSeconds(c.seconds), "\n");
  }
  if (a.search != nullptr) {
    absl::StrAppend(&out, "search      ", a.search->evaluated, " plans scored, ", a.search->fitting, " fit, in ",
                    FormatSeconds(a.search_seconds), a.search->complete ? "" : " (stopped by the deadline)", "\n");
    absl::StrAppend(&out, "reason      ", a.search->reason, "\n");
  }
  for (const std::string& note : a.notes) absl::StrAppend(&out, "note        ", note, "\n");
  return out;
}

std::string TransformerJson(const TransformerAnswer& a) {
  nlohmann::ordered_json j;
  j["format"] = "placement.transformer_plan/v1";
  const TransformerSpec& s = *a.spec;
  j["model"] = {{"model_type", s.model_type}, {"layers", s.layers},   {"hidden", s.hidden},
                {"heads", s.heads},           {"kv_heads", s.kv_heads}, {"vocab", s.vocab},
                {"parameters", ParameterCount(s)}, {"seq", a.run->seq}, {"global_batch", a.run->global_batch},
                {"precision", a.precision}};
  j["cluster"] = {{"name", a.cluster->name}, {"gpus", a.cluster->devices()}, {"hosts", a.cluster->hosts},
                  {"per_host", a.cluster->per_host}, {"device", a.cluster->device.kind}};
  j.update(ResultJson(*a.result));
  if (a.search != nullptr) {
    nlohmann::ordered_json search = {{"evaluated", a.search->evaluated}, {"fitting", a.search->fitting},
                                     {"complete", a.search->complete}, {"seconds", a.search_seconds},
                                     {"reason", a.search->reason}};
    if (a.search->data_parallel.ok()) search["data_parallel"] = ResultJson(*a.search->data_parallel);
    j["search"] = search;
  }
  j["notes"] = a.notes;
  return j.dump(2) + "\n";
}

namespace {

// Megatron-LM's rank layout: tensor-parallel ranks innermost, then data-parallel replicas, then stages. The label
// names the first replica's GPUs of the stage, its tensor-parallel group and its data-parallel replicas.
std::string StageLabel(const ClusterShape& c, const transformer::TransformerPlan& p, int64_t stage) {
  const int64_t first = stage * p.tp * p.dp, last = first + p.tp - 1;
  const auto gpu = [&](int64_t rank) { return absl::StrCat("host", rank / c.per_host, "/gpu", rank % c.per_host); };
  return absl::StrCat("stage ", stage, ": ", gpu(first), p.tp > 1 ? absl::StrCat("-", last % c.per_host) : "",
                      " (tp ", p.tp, ", dp ", p.dp, ")");
}

}  // namespace

absl::StatusOr<std::string> TransformerChartHtml(const TransformerAnswer& a) {
  const TransformerPlanResult& r = *a.result;
  absl::StatusOr<PipelineTimeline> timeline =
      SchedulePipeline(r.stage_times, r.micro_batches, static_cast<int32_t>(r.plan.vpp), r.send_seconds);
  if (!timeline.ok()) return timeline.status();
  PipelineChartInput in;
  in.title = absl::StrCat(a.spec->model_type, " on ", a.cluster->name, ": ", transformer::TransformerPlanString(r.plan));
  in.summary = {ModelLine(a),
                absl::StrFormat("iteration %s, %.0f tokens/s, MFU %.1f%%; one pipeline of %d, laid out pass by pass: "
                                "%s", FormatSeconds(r.iteration_seconds), r.tokens_per_second, 100 * r.mfu,
                                r.plan.pp, FormatSeconds(timeline->makespan)),
                absl::StrCat("memory ", MemoryLine(r))};
  for (int64_t s = 0; s < r.plan.pp; ++s) in.stage_labels.push_back(StageLabel(*a.cluster, r.plan, s));
  in.timeline = &*timeline;
  in.chunks = static_cast<int32_t>(r.plan.vpp);
  in.reduction_seconds = r.parts.data_parallel;
  in.optimizer_seconds = r.parts.optimizer;
  const transformer::GpuMemory& m = r.memory;
  in.memory = {{"parameters", m.parameters}, {"gradients", m.gradients}, {"optimizer", m.optimizer},
               {"activations", m.activations}, {"workspace", m.workspace}};
  in.memory_capacity = r.memory_capacity;
  return RenderPipelineChartHtml(in);
}

}  // namespace placement::cli

#include "server/transformer_answer.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "graph/precision.h"
#include "graph/status_macros.h"
#include "server/request_decoder.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

// An error in what the request sent is INVALID_ARGUMENT whatever code the parser chose (a topology without
// accelerators is FAILED_PRECONDITION to ClusterShapeOf, which that code means to a client: no plan fits), except
// UNIMPLEMENTED: a cluster the plan model does not cover. `field` prefixes messages that do not name it.
absl::Status InField(absl::string_view field, const absl::Status& s) {
  const absl::StatusCode code =
      s.code() == absl::StatusCode::kUnimplemented ? s.code() : absl::StatusCode::kInvalidArgument;
  return absl::Status(code, field.empty() ? s.message() : absl::StrCat(field, ": ", s.message()));
}

bool Unset(const std::string& value, absl::string_view default_name) {
  const std::string v = absl::AsciiStrToLower(value);
  return v.empty() || v == default_name;
}

// The options a request may set for a graph that mean nothing to a transformer plan. Refused rather than ignored:
// an answer that silently dropped one would look like its answer.
std::vector<std::string> GraphOnlyOptions(const pb::PlaceRequest& r) {
  std::vector<std::string> given;
  auto check = [&given](bool set, const char* what) {
    if (set) given.push_back(what);
  };
  check(!Unset(r.algorithm(), "auto"), "algorithm (the plan search is exhaustive)");
  check(r.objective() != pb::OBJECTIVE_STEP_TIME, "objective (a plan is scored by its iteration time)");
  check(!Unset(r.cost_model(), "default"), "cost_model");
  check(!Unset(r.schedule(), "1f1b"), "schedule (a plan runs 1F1B, interleaved with vpp=N in transformer_plan)");
  check(r.global_batch() != 0, "global_batch (options.batch_size is the global batch in sequences)");
  check(r.micro_batch_size() != 0, "micro_batch_size (say mbs=N in transformer_plan)");
  check(!Unset(r.sharding(), "none"), "sharding (say zero=1..3 in transformer_plan)");
  check(!Unset(r.recompute(), "none"), "recompute (say recompute=selective|full in transformer_plan)");
  check(!r.policy().empty(), "policy (the learned policies place graphs)");
  check(!Unset(r.simulator().preset(), "default") || !Unset(r.simulator().priority(), "topological"), "simulator");
  const pb::GraphOptions& o = r.options();
  check(!o.dims().empty() || o.allow_unresolved_dims() || o.has_num_data_inputs() || o.loop_iterations() != 0 ||
            o.max_unrolled_nodes() != 0,
        "options' ONNX dimensions and loops");
  check(!o.costs().empty() || !Unset(o.costs_kind(), "*"), "options.costs");
  check(!Unset(o.optimizer(), "adam"), "options.optimizer (the plan model trains with Adam)");
  check(o.backward_multiplier() != 0 && o.backward_multiplier() != 2, "options.backward_multiplier");
  check(!Unset(o.runtime(), "eager"), "options.runtime");
  return given;
}

absl::Status CheckOptions(const pb::PlaceRequest& r) {
  if (const std::string p = absl::AsciiStrToLower(r.parallelism()); !p.empty() && p != "auto" && p != "tensor") {
    return absl::InvalidArgumentError(absl::StrCat(
        "parallelism: '", r.parallelism(),
        "' plans a graph; a config.json is planned with \"\" or \"auto\" (tensor, pipeline and data parallelism "
        "searched together) or \"tensor\" (every GPU one tensor-parallel group); hold keys fixed with "
        "transformer_plan, e.g. \"pp=4\""));
  }
  if (const std::vector<std::string> given = GraphOnlyOptions(r); !given.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hf_config: these options apply to graphs, not to a transformer plan: ", absl::StrJoin(given, "; ")));
  }
  if (r.options().batch_size() <= 0) {
    return absl::InvalidArgumentError(
        "options.batch_size: a transformer plan needs the global batch, sequences per iteration (e.g. 512)");
  }
  if (r.options().sequence_length() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.sequence_length: must not be negative (got ", r.options().sequence_length(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterShape> ClusterOf(const pb::PlaceRequest& r, const ServerLimits& limits) {
  if (!r.has_topology() || r.topology().source_case() == pb::Topology::SOURCE_NOT_SET) {
    return absl::InvalidArgumentError(
        "topology: a config.json describes no cluster; set topology.shorthand (e.g. \"2x8xA100\") or topology.json");
  }
  ASSIGN_OR_RETURN(const Topology topology, ParseTopology(r.topology()));
  if (topology.num_devices() > limits.max_devices) {
    return absl::ResourceExhaustedError(absl::StrCat("the topology has ", topology.num_devices(),
                                                     " devices; this server's limit is ", limits.max_devices,
                                                     " (--max_devices)"));
  }
  absl::StatusOr<ClusterShape> shape = ClusterShapeOf(topology);
  if (!shape.ok()) return InField("", shape.status());  // its messages begin "topology 'NAME'"
  return shape;
}

// The run the plan is for, with what the request left to the defaults said in notes (as placectl place does).
absl::Status SetRun(const pb::PlaceRequest& r, TransformerQuery& q) {
  const pb::GraphOptions& o = r.options();
  absl::StatusOr<Precision> precision = ParsePrecision(o.precision());
  if (!precision.ok()) return InField("options.precision", precision.status());
  q.precision = o.precision().empty() ? "fp32" : absl::AsciiStrToLower(o.precision());
  q.run = transformer::RunFor(q.spec, o.sequence_length(), o.batch_size(), *precision,
                              "the request's sequence length", "precision", q.notes);
  return absl::OkStatus();
}

void FillPlan(const transformer::TransformerPlanResult& r, pb::TransformerPlanAnswer* out) {
  const transformer::TransformerPlan& p = r.plan;
  out->set_plan(transformer::TransformerPlanString(p));
  out->set_tp(p.tp);
  out->set_pp(p.pp);
  out->set_vpp(p.vpp);
  out->set_dp(p.dp);
  out->set_mbs(p.micro_batch);
  out->set_zero(p.zero);
  out->set_recompute(std::string(transformer::LayerRecomputeName(p.recompute)));
  out->set_sp(p.sequence_parallel);
  out->set_flash(p.flash_attention);
  out->set_overlap(p.overlap_gradient_reduce);
  out->set_micro_batches(r.micro_batches);
  out->set_iteration_seconds(r.iteration_seconds);
  out->set_samples_per_second(r.samples_per_second);
  out->set_tokens_per_second(r.tokens_per_second);
  out->set_mfu(r.mfu);
  out->set_hfu(r.hfu);
}

void FillFigures(const transformer::TransformerPlanResult& r, pb::TransformerPlanAnswer* out) {
  FillPlan(r, out);
  const transformer::IterationParts& t = r.parts;
  pb::TransformerTimeParts* time = out->mutable_time();
  time->set_forward(t.forward);
  time->set_backward(t.backward);
  time->set_recompute(t.recompute);
  time->set_tensor_parallel(t.tensor_parallel);
  time->set_pipeline_send(t.pipeline_send);
  time->set_pipeline_bubble(t.pipeline_bubble);
  time->set_data_parallel(t.data_parallel);
  time->set_optimizer(t.optimizer);
  const transformer::GpuMemory& m = r.memory;
  pb::TransformerMemory* memory = out->mutable_memory();
  memory->set_parameters(static_cast<int64_t>(m.parameters));
  memory->set_gradients(static_cast<int64_t>(m.gradients));
  memory->set_optimizer(static_cast<int64_t>(m.optimizer));
  memory->set_activations(static_cast<int64_t>(m.activations));
  memory->set_workspace(static_cast<int64_t>(m.workspace));
  memory->set_total(static_cast<int64_t>(m.total()));
  memory->set_capacity(static_cast<int64_t>(r.memory_capacity));
  memory->set_fits(r.fits);
  for (const transformer::CommunicationVolume& c : r.communication) {
    pb::TransformerCommunication* comm = out->add_communication();
    comm->set_kind(c.kind);
    comm->set_link(c.link);
    comm->set_bytes(c.bytes);
    comm->set_seconds(c.seconds);
  }
}

pb::TransformerPlanAnswer PlanAnswer(const TransformerQuery& q, const parallel::TransformerSearchResult& search) {
  pb::TransformerPlanAnswer out;
  FillFigures(search.best, &out);
  out.set_plans_evaluated(search.evaluated);
  out.set_plans_fitting(search.fitting);
  out.set_search_complete(search.complete);
  out.set_reason(search.reason);
  if (search.data_parallel.ok()) FillFigures(*search.data_parallel, out.mutable_data_parallel());
  out.set_parameters(ParameterCount(q.spec));
  out.set_cluster(q.cluster.name);
  out.set_gpus(q.cluster.devices());
  out.set_hosts(q.cluster.hosts);
  out.set_gpus_per_host(q.cluster.per_host);
  out.set_device_kind(q.cluster.device.kind);
  out.set_seq(q.run.seq);
  out.set_global_batch(q.run.global_batch);
  out.set_precision(q.precision);
  return out;
}

}  // namespace

absl::StatusOr<TransformerQuery> DecodeTransformerRequest(const pb::PlaceRequest& r, const ServerLimits& limits) {
  RETURN_IF_ERROR(CheckOptions(r));
  TransformerQuery q;
  ASSIGN_OR_RETURN(q.spec, ParseHfConfig(r.hf_config(), "hf_config"));  // its messages name the field
  ASSIGN_OR_RETURN(q.cluster, ClusterOf(r, limits));
  RETURN_IF_ERROR(SetRun(r, q));
  q.search.tensor_only = absl::AsciiStrToLower(r.parallelism()) == "tensor";
  if (!r.transformer_plan().empty()) {
    absl::StatusOr<transformer::TransformerPlan> fixed =
        transformer::ParseTransformerPlan(r.transformer_plan(), &q.search.fixed_keys);
    if (!fixed.ok()) return InField("transformer_plan", fixed.status());
    q.search.fixed = *fixed;
  }
  return q;
}

absl::StatusOr<pb::PlaceResponse> AnswerTransformerQuery(const TransformerQuery& q, const Budget& budget) {
  const absl::Time began = absl::Now();
  ASSIGN_OR_RETURN(const parallel::TransformerSearchResult search,
                   parallel::SearchTransformerPlans(q.spec, q.cluster, q.run, q.search, budget));
  pb::PlaceResponse response;
  response.set_compute_seconds(absl::ToDoubleSeconds(absl::Now() - began));
  *response.mutable_transformer() = PlanAnswer(q, search);
  response.set_algorithm(kTransformerSearch);
  response.set_step_time(search.best.iteration_seconds);
  response.set_samples_per_second(search.best.samples_per_second);
  response.set_num_devices(static_cast<int32_t>(q.cluster.devices()));
  pb::Score* score = response.mutable_score();
  score->set_objective(pb::OBJECTIVE_STEP_TIME);
  score->set_value(search.best.iteration_seconds);
  score->set_time_unit("s");
  score->set_fits_memory(search.best.fits);
  for (const std::string& note : q.notes) response.add_notes(note);
  return response;
}

}  // namespace placement::server

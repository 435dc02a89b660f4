#include "server/placement_engine.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/canonical.h"
#include "graph/cost_model.h"
#include "graph/status_macros.h"
#include "graph/topology_json.h"
#include "server/answer.h"
#include "server/auto_plan.h"
#include "server/request_decoder.h"
#include "server/request_key.h"
#include "server/request_log.h"
#include "server/server.h"
#include "simulator/plan_model.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

// Time kept before the client's deadline for what follows the placer: scoring overruns, encoding and sending
// the answer. A share of the time left, bounded, plus a per-operator allowance: a 100k-operator answer is
// megabytes to build and send.
constexpr double kReplyReserveShare = 0.05;
constexpr absl::Duration kMinReplyReserve = absl::Milliseconds(5);
constexpr absl::Duration kMaxReplyReserve = absl::Milliseconds(250);
constexpr absl::Duration kReplyReservePerOp = absl::Microseconds(2);

// Requests hashed on gRPC's thread for PlaceFromMemory: SHA-256 takes about a millisecond per megabyte.
constexpr size_t kMaxInlinePayloadBytes = size_t{1} << 20;

absl::StatusOr<const Placer*> FindPlacer(const PlacerRegistry& registry, const std::string& name, Objective objective,
                                         CostModelKind cost_model) {
  absl::StatusOr<const Placer*> placer = registry.Find(name);
  if (!placer.ok()) return absl::InvalidArgumentError(absl::StrCat("algorithm: ", placer.status().message()));
  if (absl::Status s = CheckPlacerFits(**placer, objective, cost_model); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("algorithm: ", s.message()));
  }
  return placer;
}

// How a request's placements are scored: its objective, its cost model (checked against the objective) and the
// simulator's settings; INVALID_ARGUMENT naming the field otherwise.
struct Scoring {
  Objective objective;
  CostModelKind cost_model;
  SimulatorConfig simulator;
};

absl::StatusOr<Scoring> ScoringOf(pb::Objective objective_field, const std::string& cost_model_field,
                                  const pb::SimulatorOptions& simulator_field) {
  absl::StatusOr<Objective> objective = ObjectiveFromProto(objective_field);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<CostModelKind> cost_model = ParseCostModel(cost_model_field);
  if (!cost_model.ok()) return absl::InvalidArgumentError(absl::StrCat("cost_model: ", cost_model.status().message()));
  if (absl::Status s = CheckCostModel(*cost_model, *objective); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cost_model: ", s.message()));
  }
  absl::StatusOr<SimulatorConfig> simulator = SimulatorFromProto(simulator_field);
  if (!simulator.ok()) return simulator.status();
  return Scoring{*objective, *cost_model, *simulator};
}

// The learned policy registers as "policy" (or "policy_<variant>"); its time is what the policy metric tracks.
bool IsLearnedPolicy(absl::string_view name) { return absl::StartsWith(name, "policy"); }

void Phase(const CallControl& control, absl::string_view what) {
  if (control.on_phase) control.on_phase(what);
}

// Forwards the answers a placer reports while it runs, keeping only those that fit memory and beat every
// answer forwarded before (sub-placers of AUTO report their own improvements, which may be worse than AUTO's
// best so far).
class ImprovementRelay {
 public:
  ImprovementRelay(const CallControl& control, const DecodedInput& input, std::string graph_hash)
      : control_(control), input_(input), graph_hash_(std::move(graph_hash)) {}

  void Offer(const PlacerResult& result) {
    if (!result.evaluation.fits_memory || result.placement.device.size() != static_cast<size_t>(input_.graph.num_ops()))
      return;
    std::lock_guard<std::mutex> lock(mu_);
    if (best_.has_value() && result.evaluation.value >= *best_) return;
    best_ = result.evaluation.value;
    pb::PlaceResponse answer = AnswerFromResult(result, input_.graph, input_.topology, input_.time_unit);
    answer.set_graph_hash(graph_hash_);
    answer.set_request_id(control_.request_id);
    control_.on_improved(answer);
  }

 private:
  const CallControl& control_;
  const DecodedInput& input_;
  const std::string graph_hash_;
  std::mutex mu_;
  std::optional<double> best_;
};

CacheKeyParts KeyParts(const pb::PlaceRequest& request, const DecodedInput& input, Objective objective,
                       CostModelKind cost_model, const std::string& algorithm, const BudgetPlan& plan,
                       const std::string& policy_version) {
  CacheKeyParts parts;
  parts.topology = TopologyToJson(input.topology);
  parts.objective = std::string(ObjectiveName(objective));
  parts.cost_model = CanonicalCostModel(cost_model);
  parts.algorithm = algorithm;
  parts.graph_options = CanonicalGraphOptions(request.options());
  parts.simulator = CanonicalSimulator(request.simulator());
  parts.plan_options = CanonicalPlanOptions(request);
  parts.seed = request.seed() == 0 ? 1 : request.seed();
  parts.budget_ms = plan.nominal_ms;
  parts.policy_version = policy_version;
  parts.time_unit = input.time_unit;
  return parts;
}

// The answer to a Place request: the placer's result in the input's terms, with what the server adds.
pb::PlaceResponse Answer(const PlacerResult& result, const DecodedInput& input, const std::string& graph_hash,
                         const std::string& policy_version, const BudgetPlan& plan, double took) {
  pb::PlaceResponse response = AnswerFromResult(result, input.graph, input.topology, input.time_unit);
  response.set_graph_hash(graph_hash);
  response.set_policy_version(policy_version);
  for (const std::string& w : input.warnings) response.add_warnings(w);
  if (!plan.warning.empty()) response.add_warnings(plan.warning);
  SetCostSources(input.cost_sources, response.mutable_cost_sources());
  response.set_precision(input.precision);
  response.set_device_figures(input.topology.description());
  response.set_compute_seconds(took);
  if (result.plan.has_value()) {
    response.set_micro_batch_size(input.samples_per_run);
    if (response.step_time() > 0)
      response.set_samples_per_second(static_cast<double>(response.global_batch() * input.samples_per_run) /
                                      response.step_time());
  }
  return response;
}

}  // namespace

BudgetPlan PlanBudget(int64_t budget_ms, const CallControl& control, const ServerLimits& limits, int64_t num_ops) {
  BudgetPlan plan;
  absl::Duration nominal = limits.default_budget;
  if (budget_ms > 0) {
    nominal = absl::Milliseconds(budget_ms);
    if (nominal > limits.max_budget) {
      plan.warning = absl::StrCat("budget_ms ", budget_ms, " was capped at this server's maximum of ",
                                  absl::ToInt64Milliseconds(limits.max_budget), " ms (--max_budget_ms)");
      nominal = limits.max_budget;
    }
  }
  plan.nominal_ms = absl::ToInt64Milliseconds(nominal);
  plan.deadline = control.arrived + nominal;
  if (control.client_deadline != absl::InfiniteFuture()) {
    const absl::Duration left = control.client_deadline - control.arrived;
    const absl::Duration reserve =
        std::clamp(left * kReplyReserveShare, kMinReplyReserve, kMaxReplyReserve) + kReplyReservePerOp * num_ops;
    const absl::Time client_end = control.client_deadline - reserve;
    if (client_end < plan.deadline) {
      plan.deadline = client_end;
      plan.cut_by_client = true;
    }
  }
  return plan;
}

PlacementEngine::PlacementEngine(const PlacerRegistry& classic, std::shared_ptr<const PolicySet> policies,
                                 AnswerCache* cache, Metrics* metrics, EngineConfig config)
    : policies_(policies != nullptr ? std::move(policies) : std::make_shared<const PolicySet>()),
      cache_(cache),
      metrics_(metrics),
      config_(std::move(config)) {
  for (const auto& p : policies_->policies)
    serving_.push_back(Serving{p->name, p->registry.get(), PolicyVersion(p->version)});
  if (serving_.empty()) serving_.push_back(Serving{"", &classic, PolicyVersion()});
}

absl::StatusOr<const PlacementEngine::Serving*> PlacementEngine::Resolve(absl::string_view name) const {
  if (name.empty()) return &serving_.front();
  for (const Serving& s : serving_) {
    if (s.name == name) return &s;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "policy: '", name, "' is not served here (",
      policies_->policies.empty() ? "no learned policy is" : absl::StrCat("served: ", policies_->Names()), ")"));
}

// What a Place request asks for, checked before its graph is decoded.
struct PlacementEngine::PlaceRoute {
  Scoring scoring;
  std::string algorithm;   // the request's, or the default
  const Serving* serving;  // the policy that answers it
  const Placer* placer;    // `algorithm` in its registry
};

// The request's graph decoded, and what follows from it: the placer's budget and the answer's cache key.
struct PlacementEngine::DecodedPlace {
  DecodedInput input;
  BudgetPlan plan;
  std::string graph_hash;
  CacheKeyParts parts;
  std::string key;  // AnswerCache::Key(parts)
};

absl::StatusOr<pb::PlaceResponse> PlacementEngine::Place(const pb::PlaceRequest& request,
                                                         const CallControl& control) const {
  if (request.budget_ms() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("budget_ms: must not be negative (got ", request.budget_ms(), ")"));
  }
  // Decoding cannot be interrupted, so the call's own deadline is checked before and after it; the placer's
  // budget is planned once the graph's size is known.
  const Budget call{control.client_deadline, control.cancelled};
  if (call.Expired()) return call.ExpiredStatus();
  if (IsTransformerRequest(request)) return PlaceTransformer(request, control);
  // A training step on several accelerators left to the service is answered as the plan it would run
  // (server/auto_plan.h): routed, decoded and placed as that plan, cached under the request as sent too.
  ASSIGN_OR_RETURN(std::optional<pb::PlaceRequest> planned, PlanRequestFor(request));
  const pb::PlaceRequest& asked = planned.has_value() ? *planned : request;
  ASSIGN_OR_RETURN(const PlaceRoute route, Route(asked));

  // A repeat of a request is answered before the graph is decoded: decoding and importing an ONNX model costs
  // tens of milliseconds, the lookup tens of microseconds. The nominal budget does not depend on the graph.
  const bool use_cache = cache_ != nullptr && !request.skip_cache();
  const std::string request_key = !control.request_key.empty()
                                      ? control.request_key
                                      : RequestKey(request, route.algorithm, route.serving->policy_version, control);
  if (use_cache) {
    if (std::optional<pb::PlaceResponse> hit = Cached(request_key, control, /*count_miss=*/false))
      return *std::move(hit);
  }
  ASSIGN_OR_RETURN(DecodedPlace decoded, Decode(asked, route, control));
  std::string batch_note;
  if (planned.has_value()) {
    ASSIGN_OR_RETURN(const bool bind_again, SplitGlobalBatchOf(request, decoded.input, *planned, &batch_note));
    if (bind_again) {
      ASSIGN_OR_RETURN(decoded, Decode(*planned, route, control));
    } else {  // the graph is bound to the micro-batch already; the key follows the split
      KeyAnswer(*planned, route, decoded);
    }
  }
  if (use_cache) {
    if (std::optional<pb::PlaceResponse> hit = CachedUnderGraphKey(decoded.key, request_key, control)) {
      return *std::move(hit);
    }
  }

  ASSIGN_OR_RETURN(pb::PlaceResponse response, RunPlacer(asked, route, decoded, control));
  if (!batch_note.empty()) response.add_notes(batch_note);
  if (cache_ != nullptr && !decoded.plan.cut_by_client) {
    Store(decoded.key, response, control);
    Store(request_key, response, control);
  }
  response.set_request_id(control.request_id);
  return response;
}

absl::StatusOr<PlacementEngine::PlaceRoute> PlacementEngine::Route(const pb::PlaceRequest& request) const {
  ASSIGN_OR_RETURN(const Scoring scoring, ScoringOf(request.objective(), request.cost_model(), request.simulator()));
  std::string algorithm = request.algorithm().empty() ? kDefaultAlgorithm : request.algorithm();
  ASSIGN_OR_RETURN(const Serving* serving, Resolve(request.policy()));
  ASSIGN_OR_RETURN(const Placer* placer,
                   FindPlacer(*serving->registry, algorithm, scoring.objective, scoring.cost_model));
  PlacementProblem options_only;  // the plan options are checked before the graph is decoded
  options_only.objective = scoring.objective;
  RETURN_IF_ERROR(SetPlanOptionsFromRequest(request, algorithm, options_only));
  return PlaceRoute{scoring, std::move(algorithm), serving, placer};
}

absl::StatusOr<PlacementEngine::DecodedPlace> PlacementEngine::Decode(const pb::PlaceRequest& request,
                                                                      const PlaceRoute& route,
                                                                      const CallControl& control) const {
  absl::StatusOr<DecodedInput> input = DecodeInput(
      SourceOf(request), request.options(), request.has_topology() ? &request.topology() : nullptr, config_.limits);
  if (!input.ok()) return input.status();
  const Budget call{control.client_deadline, control.cancelled};
  if (call.Expired()) return call.ExpiredStatus();
  DecodedPlace decoded;
  decoded.input = *std::move(input);
  const Graph& graph = decoded.input.graph;
  metrics_->GraphOperators(graph.num_ops());
  Phase(control, absl::StrCat("decoded ", decoded.input.format, ": ", graph.num_ops(), " operators, ",
                              graph.num_edges(), " edges, ", decoded.input.topology.num_devices(), " devices"));

  decoded.plan = PlanBudget(request.budget_ms(), control, config_.limits, graph.num_ops());
  decoded.graph_hash = GraphHash(graph);
  KeyAnswer(request, route, decoded);
  return decoded;
}

void PlacementEngine::KeyAnswer(const pb::PlaceRequest& request, const PlaceRoute& route, DecodedPlace& decoded) const {
  decoded.parts = KeyParts(request, decoded.input, route.scoring.objective, route.scoring.cost_model, route.algorithm,
                           decoded.plan, route.serving->policy_version);
  decoded.parts.graph_hash = decoded.graph_hash;
  decoded.key = AnswerCache::Key(decoded.parts);
}

// The same graph, cluster and options sent differently (another ONNX export, JSON spacing): the answer is the
// one cached for the canonical graph, now also stored under this request's key.
std::optional<pb::PlaceResponse> PlacementEngine::CachedUnderGraphKey(const std::string& key,
                                                                      const std::string& request_key,
                                                                      const CallControl& control) const {
  std::optional<pb::PlaceResponse> hit = Cached(key, control, /*count_miss=*/true);
  if (!hit.has_value()) return std::nullopt;
  pb::PlaceResponse stored = *hit;
  stored.clear_cache_hit();
  stored.clear_request_id();
  Store(request_key, stored, control);
  return hit;
}

absl::StatusOr<pb::PlaceResponse> PlacementEngine::RunPlacer(const pb::PlaceRequest& request, const PlaceRoute& route,
                                                             const DecodedPlace& decoded,
                                                             const CallControl& control) const {
  Budget budget{decoded.plan.deadline, control.cancelled};
  if (budget.Expired()) return budget.ExpiredStatus();
  const DecodedInput& input = decoded.input;
  absl::StatusOr<CostModel> costs = CostModel::Create(input.graph, input.topology);
  if (!costs.ok()) return costs.status();
  PlacementProblem problem;
  problem.costs = &*costs;
  problem.objective = route.scoring.objective;
  problem.cost_model = route.scoring.cost_model;
  problem.simulator = route.scoring.simulator;
  problem.seed = decoded.parts.seed;
  RETURN_IF_ERROR(SetPlanOptionsFromRequest(request, route.algorithm, problem));

  // PlaceStream: the better answers the placer finds while it runs go to the client as they come.
  std::optional<ImprovementRelay> relay;
  std::function<void(const PlacerResult&)> on_improved;
  if (control.on_improved) {
    relay.emplace(control, input, decoded.graph_hash);
    on_improved = [&relay](const PlacerResult& r) { relay->Offer(r); };
    budget.on_improved = &on_improved;
  }
  Phase(control, absl::StrCat("placing with ", route.algorithm, " (budget ",
                              absl::FormatDuration(decoded.plan.deadline - absl::Now()), ")"));
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> result = route.placer->Place(problem, budget);
  const double took = absl::ToDoubleSeconds(absl::Now() - begin);
  if (IsLearnedPolicy(route.algorithm)) metrics_->PolicyInference(took);
  if (!result.ok()) return result.status();
  if (!result->evaluation.fits_memory) return DoesNotFit(*result, input.topology);

  pb::PlaceResponse response =
      Answer(*result, input, decoded.graph_hash, route.serving->policy_version, decoded.plan, took);
  metrics_->RatioToBound(result->evaluation.ratio);
  return response;
}

std::string PlacementEngine::RequestKey(const pb::PlaceRequest& request, const std::string& algorithm,
                                        const std::string& policy_version, const CallControl& control) const {
  const std::string payload_hash = PayloadHash(request);
  metrics_->GraphHashHeaderChecked(control.graph_hash_header.empty()           ? Metrics::GraphHashHeader::kAbsent
                                   : control.graph_hash_header == payload_hash ? Metrics::GraphHashHeader::kMatch
                                                                               : Metrics::GraphHashHeader::kMismatch);
  return RequestCacheKey(request, payload_hash, algorithm,
                         PlanBudget(request.budget_ms(), control, config_.limits, 0).nominal_ms, policy_version);
}

void PlacementEngine::Store(const std::string& key, const pb::PlaceResponse& response,
                            const CallControl& control) const {
  if (absl::Status s = cache_->Insert(key, response); !s.ok()) LogLine(control.request_id, s.message());
}

std::optional<pb::PlaceResponse> PlacementEngine::PlaceFromMemory(const pb::PlaceRequest& request,
                                                                  CallControl* control) const {
  // A negative budget must get Place's error rather than the answer of the default budget it would plan.
  if (cache_ == nullptr || request.skip_cache() || request.budget_ms() < 0) return std::nullopt;
  if (request.ByteSizeLong() > kMaxInlinePayloadBytes) return std::nullopt;
  const std::string algorithm = request.algorithm().empty() ? kDefaultAlgorithm : request.algorithm();
  absl::StatusOr<const Serving*> serving = Resolve(request.policy());
  if (!serving.ok()) return std::nullopt;  // Place gives the error
  control->request_key = RequestKey(request, algorithm, (*serving)->policy_version, *control);
  std::optional<pb::PlaceResponse> response = cache_->LookupRecent(control->request_key);
  if (!response.has_value()) return std::nullopt;
  metrics_->CacheHit();
  response->set_cache_hit(true);
  response->set_request_id(control->request_id);
  return response;
}

std::optional<pb::PlaceResponse> PlacementEngine::Cached(const std::string& key, const CallControl& control,
                                                         bool count_miss) const {
  LookupResult found = cache_->Lookup(key);
  switch (found.outcome) {
    case LookupOutcome::kHit: {
      metrics_->CacheHit();
      pb::PlaceResponse response = *std::move(found.response);
      response.set_cache_hit(true);
      response.set_request_id(control.request_id);
      return response;
    }
    case LookupOutcome::kMiss:
      if (count_miss) metrics_->CacheMiss();
      break;
    case LookupOutcome::kCorrupt:
      metrics_->CacheInvalidEntry("corrupt");
      LogLine(control.request_id, "answer cache: a damaged entry was ignored (computing afresh)");
      break;
    case LookupOutcome::kOtherVersion:
      metrics_->CacheInvalidEntry("other_version");
      break;
  }
  return std::nullopt;
}

absl::StatusOr<pb::SimulateResponse> PlacementEngine::Simulate(const pb::SimulateRequest& request,
                                                               const CallControl& control) const {
  const Budget budget{control.client_deadline, control.cancelled};
  absl::StatusOr<Scoring> scoring = ScoringOf(request.objective(), request.cost_model(), request.simulator());
  if (!scoring.ok()) return scoring.status();
  absl::StatusOr<DecodedInput> input = DecodeInput(
      SourceOf(request), request.options(), request.has_topology() ? &request.topology() : nullptr, config_.limits);
  if (!input.ok()) return input.status();
  if (budget.Expired()) return budget.ExpiredStatus();
  metrics_->GraphOperators(input->graph.num_ops());
  absl::StatusOr<CostModel> costs = CostModel::Create(input->graph, input->topology);
  if (!costs.ok()) return costs.status();
  absl::StatusOr<Placement> placement = PlacementFromRequest(request, input->graph, input->topology);
  if (!placement.ok()) return placement.status();
  absl::StatusOr<Evaluation> evaluation =
      EvaluateUnder(*costs, *placement, scoring->objective, scoring->simulator, scoring->cost_model);
  if (!evaluation.ok()) return evaluation.status();

  pb::SimulateResponse response;
  FillScore(*evaluation, input->graph, *placement, input->topology, input->time_unit, response.mutable_score());
  response.set_graph_hash(GraphHash(input->graph));
  for (const std::string& w : input->warnings) response.add_warnings(w);
  SetCostSources(input->cost_sources, response.mutable_cost_sources());
  response.set_precision(input->precision);
  response.set_device_figures(input->topology.description());
  FillModules(input->graph, *placement, input->topology, response.mutable_modules());
  response.set_request_id(control.request_id);
  return response;
}

pb::ListAlgorithmsResponse PlacementEngine::ListAlgorithms() const {
  pb::ListAlgorithmsResponse response;
  for (const Placer* p : serving_.front().registry->All()) {
    pb::AlgorithmInfo* info = response.add_algorithms();
    info->set_name(std::string(p->name()));
    info->set_description(std::string(p->description()));
    for (Objective o : p->objectives()) info->add_objectives(ObjectiveToProto(o));
    for (CostModelKind k : p->cost_models()) info->add_cost_models(std::string(CostModelName(k)));
  }
  response.set_default_algorithm(kDefaultAlgorithm);
  return response;
}

std::string PlacementEngine::AlgorithmLabel(absl::string_view requested) const {
  if (requested.empty()) return kDefaultAlgorithm;
  return serving_.front().registry->Find(requested).ok() ? std::string(requested) : "unknown";
}

}  // namespace placement::server

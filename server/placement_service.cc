#include "server/placement_service.h"

#include <functional>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/call_scope.h"
#include "server/place_stream.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

absl::Status NotReady() {
  return absl::UnavailableError("the server is starting: the placers and policy are not loaded yet (retry)");
}

std::string Describe(const pb::PlaceResponse& r) {
  return absl::StrFormat("algorithm=%s value=%g%s ops=%d cache_hit=%d", r.algorithm(), r.score().value(),
                         r.score().time_unit(), r.num_operators(), r.cache_hit() ? 1 : 0);
}

std::string Describe(const pb::SimulateResponse& r) {
  return absl::StrFormat("value=%g%s", r.score().value(), r.score().time_unit());
}

std::string Describe(const pb::ReloadPolicyResponse& r) {
  std::string out = "reloaded";
  for (const std::string& name : r.reloaded()) absl::StrAppend(&out, " ", name);
  return out;
}

}  // namespace

void ServedPoliciesToProto(const PolicySet& set, google::protobuf::RepeatedPtrField<pb::ServedPolicy>* policies) {
  for (const auto& p : set.policies) {
    pb::ServedPolicy* out = policies->Add();
    out->set_name(p->name);
    out->set_version(p->version);
    out->set_weights(p->weights);
    out->set_device(p->device);
    out->set_is_default(p.get() == set.Find(""));
    out->set_loaded_unix_ms(absl::ToUnixMillis(p->loaded));
  }
}

namespace {

// A unary call whose work runs on the pool. Lives until gRPC calls OnDone, which comes after Finish; Finish is
// the last thing the work does, so nothing touches the reactor after it.
template <typename Request, typename Response>
class PooledUnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  using Work = std::function<absl::StatusOr<Response>(const Request&, const CallControl&)>;
  // An answer ready without blocking (an answer in memory), given on gRPC's thread without the pool's hop.
  using InlineWork = std::function<std::optional<Response>(const Request&, CallControl*)>;

  PooledUnaryReactor(grpc::CallbackServerContext* context, const ServiceDeps& deps, absl::string_view method,
                     const Request* request, Response* response)
      : scope_(context, deps.metrics, method, deps.token_check),
        pool_(deps.pool),
        request_(request),
        response_(response) {}

  // `ready`: the server has an engine (else UNAVAILABLE). The work holds what it needs (the engine it started
  // with) until it ends.
  void Start(bool ready, std::string algorithm_label, Work work, InlineWork inline_work = nullptr) {
    if (!scope_.admission().ok()) return Done(scope_.admission());
    scope_.set_algorithm_label(std::move(algorithm_label));
    if (!ready) return Done(NotReady());
    if (inline_work) {
      if (std::optional<Response> ready = inline_work(*request_, &scope_.control())) return Done(*std::move(ready));
    }
    work_ = std::move(work);
    if (!pool_->TrySubmit([this] { Done(work_(*request_, scope_.control())); })) {
      Done(absl::ResourceExhaustedError(absl::StrCat("the server is busy: ", pool_->max_queued(),
                                                     " requests are waiting for a worker (--max_queued_requests)")));
    }
  }

  // Ends the call with `status` without doing the work.
  void Refuse(const absl::Status& status) { Done(status); }

  void OnCancel() override { scope_.Cancel(); }
  void OnDone() override { delete this; }

 private:
  void Done(absl::StatusOr<Response> result) {
    std::string detail;
    if (result.ok()) {
      *response_ = *std::move(result);
      detail = Describe(*response_);
    }
    Finish(scope_.Finish(result.status(), detail));
  }

  CallScope scope_;
  ThreadPool* pool_;
  const Request* request_;
  Response* response_;
  Work work_;
};

}  // namespace

PlacementServiceImpl::PlacementServiceImpl(ServiceDeps deps, pb::GetServerInfoResponse info)
    : deps_(std::move(deps)), info_(std::move(info)) {}

void PlacementServiceImpl::SetEngine(std::shared_ptr<const PlacementEngine> engine, pb::GetServerInfoResponse info) {
  info.set_ready(true);
  absl::MutexLock lock(&mu_);
  engine_ = std::move(engine);
  info_ = std::move(info);
}

std::shared_ptr<const PlacementEngine> PlacementServiceImpl::engine() const {
  absl::MutexLock lock(&mu_);
  return engine_;
}

grpc::ServerUnaryReactor* PlacementServiceImpl::Place(grpc::CallbackServerContext* context,
                                                      const pb::PlaceRequest* request, pb::PlaceResponse* response) {
  auto* reactor =
      new PooledUnaryReactor<pb::PlaceRequest, pb::PlaceResponse>(context, deps_, "Place", request, response);
  std::shared_ptr<const PlacementEngine> engine = this->engine();
  reactor->Start(
      engine != nullptr, engine != nullptr ? engine->AlgorithmLabel(*request) : "none",
      [engine](const pb::PlaceRequest& r, const CallControl& c) { return engine->Place(r, c); },
      [engine](const pb::PlaceRequest& r, CallControl* c) { return engine->PlaceFromMemory(r, c); });
  return reactor;
}

grpc::ServerWriteReactor<pb::PlaceProgress>* PlacementServiceImpl::PlaceStream(grpc::CallbackServerContext* context,
                                                                               const pb::PlaceRequest* request) {
  return StartPlaceStream(context, request, deps_, engine());
}

grpc::ServerUnaryReactor* PlacementServiceImpl::Simulate(grpc::CallbackServerContext* context,
                                                         const pb::SimulateRequest* request,
                                                         pb::SimulateResponse* response) {
  auto* reactor =
      new PooledUnaryReactor<pb::SimulateRequest, pb::SimulateResponse>(context, deps_, "Simulate", request, response);
  std::shared_ptr<const PlacementEngine> engine = this->engine();
  reactor->Start(engine != nullptr, "none",
                 [engine](const pb::SimulateRequest& r, const CallControl& c) { return engine->Simulate(r, c); });
  return reactor;
}

grpc::ServerUnaryReactor* PlacementServiceImpl::ReloadPolicy(grpc::CallbackServerContext* context,
                                                             const pb::ReloadPolicyRequest* request,
                                                             pb::ReloadPolicyResponse* response) {
  ServiceDeps admin = deps_;
  admin.token_check = deps_.admin_check;
  auto* reactor = new PooledUnaryReactor<pb::ReloadPolicyRequest, pb::ReloadPolicyResponse>(
      context, admin, "ReloadPolicy", request, response);
  if (deps_.admin_check == nullptr || !deps_.admin_check->required() || !deps_.reload) {
    reactor->Refuse(absl::PermissionDeniedError(
        "this server takes no ReloadPolicy without a token (--admin_token_file or --auth_token_file); SIGHUP reloads "
        "its policies from their files"));
    return reactor;
  }
  reactor->Start(engine() != nullptr, "none",
                 [reload = deps_.reload](const pb::ReloadPolicyRequest& r, const CallControl&) {
                   absl::StatusOr<ReloadResult> result = reload(ReloadRequest{r.name(), r.weights_path(), r.weights()});
                   if (!result.ok()) return absl::StatusOr<pb::ReloadPolicyResponse>(result.status());
                   pb::ReloadPolicyResponse out;
                   for (const std::string& name : result->reloaded) out.add_reloaded(name);
                   ServedPoliciesToProto(*result->set, out.mutable_policies());
                   return absl::StatusOr<pb::ReloadPolicyResponse>(std::move(out));
                 });
  return reactor;
}

grpc::ServerUnaryReactor* PlacementServiceImpl::ListAlgorithms(grpc::CallbackServerContext* context,
                                                               const pb::ListAlgorithmsRequest* /*request*/,
                                                               pb::ListAlgorithmsResponse* response) {
  CallScope scope(context, deps_.metrics, "ListAlgorithms", deps_.token_check);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  std::shared_ptr<const PlacementEngine> engine = this->engine();
  if (!scope.admission().ok()) {
    reactor->Finish(scope.Finish(scope.admission()));
    return reactor;
  }
  if (engine == nullptr) {
    reactor->Finish(scope.Finish(NotReady()));
    return reactor;
  }
  *response = engine->ListAlgorithms();
  reactor->Finish(scope.Finish(absl::OkStatus(), absl::StrCat(response->algorithms_size(), " algorithms")));
  return reactor;
}

grpc::ServerUnaryReactor* PlacementServiceImpl::GetServerInfo(grpc::CallbackServerContext* context,
                                                              const pb::GetServerInfoRequest* /*request*/,
                                                              pb::GetServerInfoResponse* response) {
  CallScope scope(context, deps_.metrics, "GetServerInfo", deps_.token_check);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!scope.admission().ok()) {
    reactor->Finish(scope.Finish(scope.admission()));
    return reactor;
  }
  {
    absl::MutexLock lock(&mu_);
    *response = info_;
  }
  reactor->Finish(scope.Finish(absl::OkStatus(), response->ready() ? "ready" : "not ready"));
  return reactor;
}

}  // namespace placement::server

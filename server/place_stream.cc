#include "server/place_stream.h"

#include <deque>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "server/call_scope.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

class PlaceStreamReactor final : public grpc::ServerWriteReactor<pb::PlaceProgress> {
 public:
  PlaceStreamReactor(grpc::CallbackServerContext* context, const pb::PlaceRequest* request, const ServiceDeps& deps)
      : scope_(context, deps.metrics, "PlaceStream", deps.token_check), deps_(deps), request_(request) {}

  void Start(std::shared_ptr<const PlacementEngine> engine) {
    if (!scope_.admission().ok()) return Complete(scope_.admission());
    if (engine == nullptr) {
      return Complete(
          absl::UnavailableError("the server is starting: the placers and policy are not loaded yet (retry)"));
    }
    scope_.set_algorithm_label(engine->AlgorithmLabel(*request_));
    engine_ = std::move(engine);
    if (!deps_.pool->TrySubmit([this] { Run(); })) {
      Complete(
          absl::ResourceExhaustedError(absl::StrCat("the server is busy: ", deps_.pool->max_queued(),
                                                    " requests are waiting for a worker (--max_queued_requests)")));
    }
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) broken_ = true;
    }
    if (!ok) scope_.Cancel();  // nobody is reading: stop the work early
    Pump();
  }

  void OnCancel() override { scope_.Cancel(); }
  void OnDone() override { delete this; }

 private:
  double Elapsed() const { return absl::ToDoubleSeconds(absl::Now() - scope_.control().arrived); }

  pb::PlaceProgress Progress(pb::PlaceProgress::Kind kind, absl::string_view message) const {
    pb::PlaceProgress p;
    p.set_kind(kind);
    p.set_elapsed_seconds(Elapsed());
    p.set_message(std::string(message));
    return p;
  }

  // On the pool. Complete() is the last touch of the reactor.
  void Run() {
    Post(Progress(pb::PlaceProgress::KIND_STARTED,
                  absl::StrFormat("started after %.1f ms in the queue", Elapsed() * 1e3)),
         false);
    const int64_t tick = deps_.ticker->Add(
        [this] { Post(Progress(pb::PlaceProgress::KIND_HEARTBEAT, "searching"), /*droppable=*/true); });
    CallControl& control = scope_.control();
    control.on_phase = [this](absl::string_view what) {
      Post(Progress(pb::PlaceProgress::KIND_HEARTBEAT, what), false);
    };
    control.on_improved = [this](const pb::PlaceResponse& answer) {
      pb::PlaceProgress p =
          Progress(pb::PlaceProgress::KIND_IMPROVED,
                   absl::StrFormat("%s: %g%s", answer.algorithm(), answer.score().value(), answer.score().time_unit()));
      *p.mutable_answer() = answer;
      Post(std::move(p), false);
    };
    absl::StatusOr<pb::PlaceResponse> result = engine_->Place(*request_, control);
    deps_.ticker->Remove(tick);  // from here no heartbeat can touch the reactor
    if (!result.ok()) return Complete(result.status());
    pb::PlaceProgress last =
        Progress(pb::PlaceProgress::KIND_RESULT, result->cache_hit() ? "answer (from the cache)" : "answer");
    const std::string detail = absl::StrFormat("algorithm=%s value=%g cache_hit=%d", result->algorithm(),
                                               result->score().value(), result->cache_hit() ? 1 : 0);
    *last.mutable_answer() = *std::move(result);
    Complete(absl::OkStatus(), std::move(last), detail);
  }

  void Post(pb::PlaceProgress message, bool droppable) {
    {
      absl::MutexLock lock(&mu_);
      if (done_ || broken_ || (droppable && (writing_ || !queue_.empty()))) return;
      queue_.push_back(std::move(message));
    }
    Pump();
  }

  void Complete(const absl::Status& status, std::optional<pb::PlaceProgress> last = std::nullopt,
                absl::string_view detail = "") {
    const grpc::Status final_status = scope_.Finish(status, detail);
    {
      absl::MutexLock lock(&mu_);
      if (last.has_value()) queue_.push_back(*std::move(last));
      final_status_ = final_status;
      done_ = true;
    }
    Pump();
  }

  // Starts the next write, or the Finish once everything is written. Called without mu_ held: gRPC may run
  // the reaction to a write on another thread before StartWrite returns.
  void Pump() {
    bool write = false;
    grpc::Status finish_with;
    {
      absl::MutexLock lock(&mu_);
      if (writing_ || finished_) return;
      if (broken_) queue_.clear();
      if (!queue_.empty()) {
        in_flight_ = std::move(queue_.front());
        queue_.pop_front();
        writing_ = true;
        write = true;
      } else if (done_) {
        finished_ = true;
        finish_with = final_status_;
      } else {
        return;
      }
    }
    if (write) {
      StartWrite(&in_flight_);
    } else {
      Finish(finish_with);  // OnDone (and the reactor's deletion) may follow at once
    }
  }

  CallScope scope_;
  const ServiceDeps deps_;
  const pb::PlaceRequest* request_;
  std::shared_ptr<const PlacementEngine> engine_;  // the one the call started with, until it ends

  absl::Mutex mu_;
  std::deque<pb::PlaceProgress> queue_ ABSL_GUARDED_BY(mu_);
  pb::PlaceProgress in_flight_;  // owned by the write in progress while writing_
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;    // a write failed: the client is gone
  bool done_ ABSL_GUARDED_BY(mu_) = false;      // the work ended; final_status_ is set
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerWriteReactor<pb::PlaceProgress>* StartPlaceStream(grpc::CallbackServerContext* context,
                                                              const pb::PlaceRequest* request, const ServiceDeps& deps,
                                                              std::shared_ptr<const PlacementEngine> engine) {
  auto* reactor = new PlaceStreamReactor(context, request, deps);
  reactor->Start(std::move(engine));
  return reactor;
}

}  // namespace placement::server

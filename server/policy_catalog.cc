#include "server/policy_catalog.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/canonical.h"
#include "graph/file_io.h"

namespace placement::server {

const ServedPolicy* PolicySet::Find(absl::string_view name) const {
  if (policies.empty()) return nullptr;
  if (name.empty()) return policies.front().get();
  for (const auto& p : policies) {
    if (p->name == name) return p.get();
  }
  return nullptr;
}

std::string PolicySet::Names() const {
  return absl::StrJoin(policies, ", ", [](std::string* out, const auto& p) { absl::StrAppend(out, p->name); });
}

PolicyCatalog::PolicyCatalog(std::vector<PolicySpec> specs, std::shared_ptr<const PolicySet> initial,
                             PolicyFileLoader loader, std::string upload_dir)
    : loader_(std::move(loader)),
      upload_dir_(std::move(upload_dir)),
      specs_(std::move(specs)),
      current_(initial != nullptr ? std::move(initial) : std::make_shared<const PolicySet>()) {}

std::shared_ptr<const PolicySet> PolicyCatalog::current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::StatusOr<std::string> PolicyCatalog::KeepUpload(const std::string& name, const std::string& bytes) const {
  std::error_code ec;
  std::filesystem::create_directories(upload_dir_, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create '", upload_dir_, "': ", ec.message()));
  // Named by content: the same bytes sent twice are one file, and a file in use is never overwritten.
  const std::string path =
      absl::StrCat(upload_dir_, "/", name.empty() ? "default" : name, "-", Sha256Hex(bytes).substr(0, 16), ".pt");
  if (absl::Status s = WriteWholeFile(path, bytes); !s.ok()) return s;
  return path;
}

absl::StatusOr<std::vector<PolicySpec>> PolicyCatalog::SpecsFor(const ReloadRequest& r) {
  if (!r.weights_path.empty() && !r.weights.empty()) {
    return absl::InvalidArgumentError("give the new weights as weights_path or as weights, not both");
  }
  const bool new_weights = !r.weights_path.empty() || !r.weights.empty();
  if (r.name.empty() && !new_weights) {
    if (specs_.empty()) return absl::FailedPreconditionError("this server serves no learned policy to reload");
    return specs_;
  }
  const std::string name = !r.name.empty() ? r.name : specs_.empty() ? "default" : specs_.front().name;
  auto configured = std::find_if(specs_.begin(), specs_.end(), [&](const PolicySpec& s) { return s.name == name; });
  if (!new_weights) {
    if (configured == specs_.end()) {
      return absl::NotFoundError(absl::StrCat("no policy named '", name, "' is served (served: ", current()->Names(),
                                              "); send weights to add it"));
    }
    return std::vector<PolicySpec>{*configured};
  }
  if (!r.weights_path.empty()) return std::vector<PolicySpec>{{name, r.weights_path}};
  absl::StatusOr<std::string> kept = KeepUpload(name, r.weights);
  if (!kept.ok()) return kept.status();
  return std::vector<PolicySpec>{{name, *kept}};
}

absl::StatusOr<ReloadResult> PolicyCatalog::Reload(const ReloadRequest& request) {
  if (!loader_) {
    return absl::FailedPreconditionError(
        "this server runs without the learned policy (built without LibTorch, or --policy_device=none): nothing "
        "to reload");
  }
  absl::MutexLock reload(&reload_mu_);
  absl::StatusOr<std::vector<PolicySpec>> specs = SpecsFor(request);
  if (!specs.ok()) return specs.status();
  // Every file is read and checked before anything switches.
  std::vector<std::shared_ptr<const ServedPolicy>> loaded;
  for (const PolicySpec& spec : *specs) {
    absl::StatusOr<ServedPolicy> policy = loader_(spec);
    if (!policy.ok()) {
      std::error_code ec;
      if (!request.weights.empty()) std::filesystem::remove(spec.weights, ec);  // an upload that will never serve
      return absl::Status(policy.status().code(),
                          absl::StrCat("policy '", spec.name, "' not reloaded, its weights stay ",
                                       "as they were: ", policy.status().message()));
    }
    loaded.push_back(std::make_shared<const ServedPolicy>(*std::move(policy)));
  }
  auto next = std::make_shared<PolicySet>(*current());
  ReloadResult result;
  for (auto& p : loaded) {
    result.reloaded.push_back(p->name);
    auto same =
        std::find_if(next->policies.begin(), next->policies.end(), [&](const auto& q) { return q->name == p->name; });
    if (same != next->policies.end()) {
      *same = p;
    } else {
      next->policies.push_back(p);  // a policy served from now on
    }
    auto spec = std::find_if(specs_.begin(), specs_.end(), [&](const PolicySpec& s) { return s.name == p->name; });
    if (spec != specs_.end())
      spec->weights = p->weights;
    else
      specs_.push_back({p->name, p->weights});
  }
  result.set = std::move(next);
  absl::MutexLock lock(&mu_);
  current_ = result.set;
  return result;
}

}  // namespace placement::server

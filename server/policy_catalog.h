// The learned policies a server serves, by name, and their swaps while it serves.
//
// A PolicySet is what the server answers with at one moment: immutable, shared by every call that started under
// it, so a call in flight finishes on the weights it started with whatever is swapped meanwhile. PolicyCatalog
// holds the current set and makes the next one: it reads and checks every new weights file before anything
// switches (all of them or none: a bad file leaves the old weights serving), then publishes the new set. The
// loader that reads a file is the binary's (policy_setup.h, with LibTorch); this library does not link LibTorch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "policy/registry.h"

namespace placement::server {

// A policy to serve: a name and the weights file it is read from.
struct PolicySpec {
  std::string name;
  std::string weights;
};

struct ServedPolicy {
  std::string name;
  std::string weights;  // the file it was read from
  std::string version;  // of the weights ("gnn-3+f77d43be")
  std::string device;   // "cpu", "cuda:0"
  absl::Time loaded;
  std::shared_ptr<const PlacerRegistry> registry;  // the classical placers, the learned ones on these weights, AUTO
};

// Reads a weights file and checks it (the network loads and scores a graph) into a policy ready to serve; the
// error names the file (NOT_FOUND when missing, DATA_LOSS when it is not weights of this network).
using PolicyFileLoader = std::function<absl::StatusOr<ServedPolicy>(const PolicySpec& spec)>;

struct PolicySet {
  std::vector<std::shared_ptr<const ServedPolicy>> policies;  // the default first

  // `name` "" is the default; null when not served (or no policy at all).
  const ServedPolicy* Find(absl::string_view name) const;
  // "a, b, c", for messages.
  std::string Names() const;
};

// What ReloadPolicy asks: see placement.proto ReloadPolicyRequest.
struct ReloadRequest {
  std::string name;          // "" = every policy from its own file, or the default one with new weights
  std::string weights_path;  // a file on this host
  std::string weights;       // or the bytes of one
};

struct ReloadResult {
  std::shared_ptr<const PolicySet> set;  // now serving
  std::vector<std::string> reloaded;     // the names read
};

class PolicyCatalog {
 public:
  // `specs`: the policies configured at start, the default first, including any that failed to load then (a
  // reload of every policy tries them again). `upload_dir` keeps weights sent as bytes.
  PolicyCatalog(std::vector<PolicySpec> specs, std::shared_ptr<const PolicySet> initial, PolicyFileLoader loader,
                std::string upload_dir);

  std::shared_ptr<const PolicySet> current() const;

  // Loads what `request` names; on success the new set serves from the moment this returns. On failure the
  // current set stays and the error says which file is wrong. FAILED_PRECONDITION without a loader (a server
  // built or started without the learned policy); NOT_FOUND for a name that is not served and gets no weights.
  absl::StatusOr<ReloadResult> Reload(const ReloadRequest& request);

 private:
  absl::StatusOr<std::vector<PolicySpec>> SpecsFor(const ReloadRequest& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_);
  // Writes weights sent as bytes under upload_dir_; returns the file.
  absl::StatusOr<std::string> KeepUpload(const std::string& name, const std::string& bytes) const;

  PolicyFileLoader loader_;
  const std::string upload_dir_;
  absl::Mutex reload_mu_;  // one reload at a time
  std::vector<PolicySpec> specs_ ABSL_GUARDED_BY(reload_mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const PolicySet> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace placement::server

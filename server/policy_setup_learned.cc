// placement_server: the learned policies with LibTorch.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "graph/cost_model.h"
#include "graph/graph_families.h"
#include "graph/topology_json.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/torch_device.h"
#include "policy/learned/weights_path.h"
#include "server/policy_setup.h"
#include "server/request_log.h"

namespace placement::server {
namespace {

// What every weights file must do before it serves: place a small graph. A file that loads but whose network
// fails on a real input is refused here, not on the first request after a swap.
absl::Status CheckPlaces(const learned::LearnedPolicy& policy, const std::string& path) {
  FamilyOptions family;
  family.approx_ops = 24;
  absl::StatusOr<Graph> graph = GenerateFamily("layered", family);
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("2xV100");
  if (!graph.ok() || !topology.ok()) return absl::InternalError("the weights check's graph cannot be built");
  absl::StatusOr<CostModel> costs = CostModel::Create(*graph, *topology);
  if (!costs.ok()) return costs.status();
  absl::StatusOr<learned::PolicyAnswer> answer = learned::RunPolicy(policy, *costs);
  if (!answer.ok()) {
    return absl::DataLossError(
        absl::StrCat("policy weights '", path, "' load but do not place a graph: ", answer.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<ServedPolicy> LoadServed(const PolicySpec& spec, const std::string& device) {
  absl::StatusOr<std::shared_ptr<const learned::LearnedPolicy>> policy =
      learned::LearnedPolicy::Load(spec.weights, device);
  if (!policy.ok()) return policy.status();
  if (absl::Status s = CheckPlaces(**policy, spec.weights); !s.ok()) return s;
  return ServedPolicy{spec.name,           spec.weights, (*policy)->version(),
                      (*policy)->device(), absl::Now(),  learned::MakeRegistryWithPolicy(*policy)};
}

// The default policy (--policy_weights, or the shipped weights) first, then the named ones.
std::vector<PolicySpec> ConfiguredPolicies(const ServerOptions& o) {
  std::vector<PolicySpec> specs = {
      {"default", o.policy_weights.empty() ? learned::DefaultPolicyWeights() : o.policy_weights}};
  specs.insert(specs.end(), o.named_policies.begin(), o.named_policies.end());
  return specs;
}

}  // namespace

absl::Status SetUpPolicy(ServerOptions* options) {
  // Requests already run in parallel, one worker per core; intra-op threads on top of them only wait for a core
  // (a forward pass went from milliseconds to half a second with two OpenMP threads on a busy 2-core host).
  if (absl::Status s = learned::SetTorchThreads(1); !s.ok() && options->policy_device != "none") {
    return absl::Status(s.code(), absl::StrCat(s.message(), " (--policy_device=none serves without the policy)"));
  }
  const std::string device = options->policy_device;
  if (device == "none") return absl::OkStatus();
  auto set = std::make_shared<PolicySet>();
  options->policy_specs = ConfiguredPolicies(*options);
  for (const PolicySpec& spec : options->policy_specs) {
    absl::StatusOr<ServedPolicy> loaded = LoadServed(spec, device);
    if (loaded.ok()) {
      LogLine("", absl::StrCat("policy ", loaded->version, " loaded from ", spec.weights, " on ", loaded->device,
                               ", served as '", spec.name, "'"));
      set->policies.push_back(std::make_shared<const ServedPolicy>(*std::move(loaded)));
    } else if (options->policy_fallback && loaded.status().code() != absl::StatusCode::kFailedPrecondition) {
      LogLine("", absl::StrCat("policy ", spec.name, " not loaded (", loaded.status().message(),
                               "); --policy_fallback: serving AUTO without it"));
    } else {
      return absl::Status(
          loaded.status().code(),
          absl::StrCat(loaded.status().message(),
                       options->policy_fallback ? "" : " (--policy_fallback serves without the policy)"));
    }
  }
  options->policies = std::move(set);
  options->policy_file_loader = [device](const PolicySpec& spec) { return LoadServed(spec, device); };
  options->policy_loader = [](const std::string& preference) -> absl::StatusOr<PolicyRuntime> {
    absl::StatusOr<learned::TorchRuntime> runtime = learned::SelectTorchDevice(preference);
    if (!runtime.ok()) return runtime.status();
    return PolicyRuntime{runtime->device, runtime->torch_version};
  };
  return absl::OkStatus();
}

}  // namespace placement::server

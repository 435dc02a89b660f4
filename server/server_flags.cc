#include "server/server_flags.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC address, host:port; port 0 picks a free port (printed as 'listening on HOST:PORT')");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address, host:port (port 0 picks one, printed as 'metrics on HOST:PORT'); empty: none");
ABSL_FLAG(std::string, data_dir, "./data", "directory of the answer cache (RocksDB); created when missing");
ABSL_FLAG(int64_t, cache_max_mb, 1024, "approximate bound on the answer cache, MiB (oldest answers go first)");
ABSL_FLAG(int64_t, cache_memory_mb, 64,
          "recently used answers kept parsed in memory in front of the cache, MiB; 0: none");
ABSL_FLAG(int64_t, max_message_mb, 256, "largest request or response message, MiB");
ABSL_FLAG(int64_t, max_operators, 500000, "most operators a placed graph may have (after a training expansion)");
ABSL_FLAG(int64_t, max_edges, 4000000, "most edges a placed graph may have");
ABSL_FLAG(int64_t, max_devices, 1024, "most devices a topology may have");
ABSL_FLAG(int64_t, default_budget_ms, 10000, "placer budget when a request sets no budget_ms");
ABSL_FLAG(int64_t, max_budget_ms, 300000, "most budget_ms a request may ask for (larger values are capped)");
ABSL_FLAG(int32_t, threads, 0,
          "worker threads for placement work; 0: one per CPU this process may use (its cgroup CPU limit, rounded up)");
ABSL_FLAG(int32_t, max_queued_requests, 256, "requests waiting for a worker beyond this get RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, grace_period, absl::Seconds(30),
          "on SIGTERM/SIGINT: how long calls in flight may take to finish before they are cancelled");
ABSL_FLAG(absl::Duration, heartbeat, absl::Seconds(1), "PlaceStream heartbeat period");
ABSL_FLAG(std::string, policy_device, "auto", "where the learned policy runs: auto, cpu, cuda, or none");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain of the server; with --tls_key turns TLS on");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates; when set, clients must present a certificate this CA signed (mutual TLS)");
ABSL_FLAG(std::string, auth_token_file, "",
          "a private file (mode 600) holding the bearer token placement.v1 calls must carry; when empty the token "
          "comes from $PLACEMENT_AUTH_TOKEN, and when that is unset too no token is required");
ABSL_FLAG(std::string, policy_weights, "",
          "the learned policy's weights; empty: the shipped models/placement_policy.pt (working directory, install "
          "prefix, then source tree)");
ABSL_FLAG(std::vector<std::string>, policy, {},
          "more learned policies served beside the default one (--policy_weights): NAME=FILE, repeatable or a comma "
          "list; a request picks one by name (PlaceRequest.policy), placectl info lists them");
ABSL_FLAG(std::string, admin_token_file, "",
          "a private file (mode 600) holding the token ReloadPolicy (placectl reload) must carry; empty: the bearer "
          "token of --auth_token_file; with neither, ReloadPolicy is refused and only SIGHUP reloads");
ABSL_FLAG(bool, policy_fallback, false,
          "when the weights are missing or unreadable, log it and serve AUTO without the policy instead of refusing "
          "to start");
ABSL_FLAG(std::string, config, "",
          "a flag file: one --flag=value per line, '#' comments (absl's --flagfile); command-line flags win over it");

namespace placement::server {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The default policy's name (--policy_weights); --policy may not take it.
constexpr char kDefaultPolicyName[] = "default";

absl::Status Positive(absl::string_view flag, int64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " must be positive (got ", value, ")"));
}

}  // namespace

absl::StatusOr<std::vector<PolicySpec>> ParsePolicySpecs(const std::vector<std::string>& items) {
  std::vector<PolicySpec> specs;
  for (const std::string& item : items) {
    const size_t eq = item.find('=');
    PolicySpec spec{item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1)};
    const bool name_ok = !spec.name.empty() && std::all_of(spec.name.begin(), spec.name.end(), [](char c) {
      return absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.';
    });
    if (!name_ok || spec.weights.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--policy '", item, "' is not NAME=FILE (a name of letters, digits, _ - .)"));
    }
    if (spec.name == kDefaultPolicyName) {
      return absl::InvalidArgumentError(
          "--policy: 'default' is the policy of --policy_weights; name this one otherwise");
    }
    for (const PolicySpec& other : specs) {
      if (other.name == spec.name)
        return absl::InvalidArgumentError(absl::StrCat("--policy: '", spec.name, "' given twice"));
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<char*> ExpandConfigFlag(int argc, char** argv, std::vector<std::string>* storage) {
  std::vector<std::string> configs;
  std::vector<std::string> policies;  // --policy given several times: absl would keep the last, so they are joined
  std::vector<int> rest;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {  // everything after is positional
      for (int j = i; j < argc; ++j) rest.push_back(j);
      break;
    }
    if (absl::StartsWith(arg, "--policy=") || absl::StartsWith(arg, "-policy=")) {
      policies.emplace_back(arg.substr(arg.find('=') + 1));
    } else if ((arg == "--policy" || arg == "-policy") && i + 1 < argc) {
      policies.emplace_back(argv[++i]);
    } else if (absl::StartsWith(arg, "--config=") || absl::StartsWith(arg, "-config=")) {
      configs.emplace_back(arg.substr(arg.find('=') + 1));
    } else if ((arg == "--config" || arg == "-config") && i + 1 < argc) {
      configs.emplace_back(argv[++i]);
    } else {
      rest.push_back(i);
    }
  }
  storage->clear();
  storage->reserve(configs.size() + 1);
  for (const std::string& c : configs) storage->push_back(absl::StrCat("--flagfile=", c));
  if (!policies.empty()) storage->push_back(absl::StrCat("--policy=", absl::StrJoin(policies, ",")));
  std::vector<char*> out;
  out.push_back(argv[0]);
  for (std::string& s : *storage) out.push_back(s.data());
  for (int i : rest) out.push_back(argv[i]);
  return out;
}

absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions o;
  o.listen_address = absl::GetFlag(FLAGS_listen);
  o.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"cache_max_mb", absl::GetFlag(FLAGS_cache_max_mb)},
                                    {"max_message_mb", absl::GetFlag(FLAGS_max_message_mb)},
                                    {"max_operators", absl::GetFlag(FLAGS_max_operators)},
                                    {"max_edges", absl::GetFlag(FLAGS_max_edges)},
                                    {"max_devices", absl::GetFlag(FLAGS_max_devices)},
                                    {"default_budget_ms", absl::GetFlag(FLAGS_default_budget_ms)},
                                    {"max_budget_ms", absl::GetFlag(FLAGS_max_budget_ms)}}) {
    if (absl::Status s = Positive(flag, value); !s.ok()) return s;
  }
  if (absl::GetFlag(FLAGS_max_message_mb) > 2047) {
    return absl::InvalidArgumentError("--max_message_mb must be below 2048 (gRPC's message size is an int)");
  }
  if (absl::GetFlag(FLAGS_cache_memory_mb) < 0)
    return absl::InvalidArgumentError("--cache_memory_mb must not be negative");
  o.cache_max_bytes = absl::GetFlag(FLAGS_cache_max_mb) * kMiB;
  o.cache_memory_bytes = absl::GetFlag(FLAGS_cache_memory_mb) * kMiB;
  o.limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_mb) * kMiB;
  o.limits.max_operators = absl::GetFlag(FLAGS_max_operators);
  o.limits.max_edges = absl::GetFlag(FLAGS_max_edges);
  o.limits.max_devices = absl::GetFlag(FLAGS_max_devices);
  o.limits.default_budget = absl::Milliseconds(absl::GetFlag(FLAGS_default_budget_ms));
  o.limits.max_budget = absl::Milliseconds(absl::GetFlag(FLAGS_max_budget_ms));
  o.worker_threads = absl::GetFlag(FLAGS_threads);
  o.max_queued_requests = absl::GetFlag(FLAGS_max_queued_requests);
  o.heartbeat_period = absl::GetFlag(FLAGS_heartbeat);
  o.policy_device = absl::GetFlag(FLAGS_policy_device);
  o.security.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  o.security.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  o.security.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  if (const std::string token_file = absl::GetFlag(FLAGS_auth_token_file); !token_file.empty()) {
    absl::StatusOr<std::string> token = ReadAuthTokenFile(token_file);
    if (!token.ok()) return token.status();
    o.security.auth_token = *std::move(token);
  } else if (const char* env = std::getenv(kAuthTokenEnv); env != nullptr) {
    o.security.auth_token = std::string(absl::StripAsciiWhitespace(env));
  }
  if (const std::string admin_file = absl::GetFlag(FLAGS_admin_token_file); !admin_file.empty()) {
    absl::StatusOr<std::string> token = ReadAuthTokenFile(admin_file, "admin_token_file");
    if (!token.ok()) return token.status();
    o.security.admin_token = *std::move(token);
  }
  o.policy_weights = absl::GetFlag(FLAGS_policy_weights);
  absl::StatusOr<std::vector<PolicySpec>> named = ParsePolicySpecs(absl::GetFlag(FLAGS_policy));
  if (!named.ok()) return named.status();
  o.named_policies = *std::move(named);
  o.policy_fallback = absl::GetFlag(FLAGS_policy_fallback);
  return o;
}

absl::Duration GracePeriodFromFlags() { return absl::GetFlag(FLAGS_grace_period); }

}  // namespace placement::server

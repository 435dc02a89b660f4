// placement_server: the placement service. See docs/server.md, or `placement_server --help`.
#include <signal.h>
#include <string.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/policy_setup.h"
#include "server/request_log.h"
#include "server/server.h"
#include "server/server_flags.h"
#include "server/signals.h"

namespace {

constexpr char kUsage[] =
    "placement_server [--config FILE] [--listen HOST:PORT] [--metrics_listen HOST:PORT] [--data_dir DIR] ...\n\n"
    "Serves placement.v1.PlacementService over gRPC (with grpc.health.v1 and server reflection) and Prometheus\n"
    "metrics over HTTP. SIGTERM or SIGINT stops it: calls in flight get --grace_period to finish, the cache is\n"
    "closed, and the exit status is 0. SIGHUP reloads the learned policies' weights from their files without a\n"
    "restart. --config FILE reads flags from FILE, one --flag=value per line.\n"
    "See docs/server.md.";

// "127.0.0.1:0" with port 50123 -> "127.0.0.1:50123": the line tests and scripts read to find the server.
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(colon == std::string::npos ? address : address.substr(0, colon), ":", port);
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists, so every thread inherits the mask and only sigwait below sees the signals.
  placement::server::BlockServerSignals();
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usage;
  // --help lists the server's own flags, which live in server_flags.cc rather than next to main.
  usage.contains_help_flags = [](absl::string_view path) { return absl::EndsWith(path, "server/server_flags.cc"); };
  absl::SetFlagsUsageConfig(usage);
  std::vector<std::string> storage;
  std::vector<char*> args = placement::server::ExpandConfigFlag(argc, argv, &storage);
  const std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (positional.size() > 1) {
    std::cerr << "placement_server: unexpected argument '" << positional[1] << "'\n\n" << kUsage << "\n";
    return 2;
  }
  absl::StatusOr<placement::server::ServerOptions> options = placement::server::OptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "placement_server: " << options.status().message() << "\n";
    return 2;
  }
  // The policy loads here, before the server starts, so that missing or corrupt weights stop the start with a
  // clear error (or, with --policy_fallback, a logged fall-back to AUTO without the policy).
  if (absl::Status s = placement::server::SetUpPolicy(&*options); !s.ok()) {
    std::cerr << "placement_server: " << s.message() << "\n";
    return 1;
  }
  const std::string listen = options->listen_address;
  const std::string metrics = options->metrics_address;
  absl::StatusOr<std::unique_ptr<placement::server::PlacementServer>> server =
      placement::server::PlacementServer::Start(*std::move(options));
  if (!server.ok()) {
    std::cerr << "placement_server: " << server.status().message() << "\n";
    return 1;
  }
  const std::string address = WithPort(listen, (*server)->port());
  placement::server::LogLine("",
                             absl::StrCat("listening on ", address, ", version ", placement::server::ServerVersion()));
  std::cout << "listening on " << address << std::endl;
  if ((*server)->metrics_port() != 0) {
    std::cout << "metrics on " << WithPort(metrics, (*server)->metrics_port()) << std::endl;
  }

  // SIGHUP reloads the learned policies from their files (a bad file keeps the old weights, and says so in the
  // log); SIGTERM and SIGINT stop the server.
  int signal_number = placement::server::WaitForServerSignal();
  for (; signal_number == SIGHUP; signal_number = placement::server::WaitForServerSignal()) {
    placement::server::LogLine("", "received SIGHUP: reloading the learned policies from their files");
    (void)(*server)->ReloadPolicies(placement::server::ReloadRequest{});  // logs its outcome
  }
  const absl::Duration grace = placement::server::GracePeriodFromFlags();
  placement::server::LogLine(
      "", absl::StrCat("received ", strsignal(signal_number), ": draining for up to ", absl::FormatDuration(grace)));
  (*server)->Shutdown(grace);
  server->reset();
  return 0;
}

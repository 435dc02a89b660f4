// placectl: the command line of the placement service.
//
//   placectl simulate GRAPH --placement FILE [--topology FILE | --devices SPEC]
//                           [--objective step_time|throughput|latency] [--local] [--output table|json]
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "client/exit_codes.h"
#include "client/simulate_command.h"

ABSL_FLAG(std::string, placement, "", "placement file: {\"assignment\": {op: device}} or a Tarnawski expert split");
ABSL_FLAG(std::string, topology, "", "cluster description file (JSON, see docs/topology.md)");
ABSL_FLAG(std::string, devices, "", "cluster shorthand, e.g. 4xA100 or 2x8xH100");
ABSL_FLAG(std::string, objective, "step_time", "step_time | throughput | latency");
ABSL_FLAG(std::string, output, "table", "table | json");
ABSL_FLAG(std::string, priority, "topological", "simulator queue priority: topological | upward_rank");
ABSL_FLAG(std::string, simulator, "default", "simulator constants: default | placeto");
ABSL_FLAG(bool, local, true, "run in this process, without a server");

namespace {

constexpr char kUsage[] =
    "placectl COMMAND [ARGS] [FLAGS]\n\n"
    "commands:\n"
    "  simulate GRAPH --placement FILE [--topology FILE | --devices SPEC] [--objective step_time|throughput|latency]\n"
    "                 [--local] [--output table|json] [--priority topological|upward_rank] [--simulator default|placeto]\n"
    "      score a placement with the execution simulator; GRAPH is a Tarnawski JSON graph\n\n"
    "exit codes: 0 ok, 1 internal error, 2 usage, 3 bad input, 4 infeasible\n";

int Simulate(const std::vector<char*>& args) {
  if (args.size() != 3) {
    std::cerr << "placectl simulate: expected exactly one GRAPH argument\n\n" << kUsage;
    return placement::cli::kExitUsage;
  }
  placement::cli::SimulateOptions options;
  options.graph_path = args[2];
  options.placement_path = absl::GetFlag(FLAGS_placement);
  options.topology_file = absl::GetFlag(FLAGS_topology);
  options.devices = absl::GetFlag(FLAGS_devices);
  options.objective = absl::GetFlag(FLAGS_objective);
  options.output = absl::GetFlag(FLAGS_output);
  options.priority = absl::GetFlag(FLAGS_priority);
  options.simulator = absl::GetFlag(FLAGS_simulator);
  absl::StatusOr<std::string> report = placement::cli::RunSimulate(options);
  if (!report.ok()) {
    std::cerr << "placectl simulate: " << report.status().message() << "\n";
    return placement::cli::ExitCodeFor(report.status());
  }
  std::cout << *report;
  return placement::cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << kUsage;
    return placement::cli::kExitUsage;
  }
  const std::string command = args[1];
  if (command == "simulate") return Simulate(args);
  if (command == "help") {
    std::cout << kUsage;
    return placement::cli::kExitOk;
  }
  std::cerr << "placectl: unknown command '" << command << "'\n\n" << kUsage;
  return placement::cli::kExitUsage;
}

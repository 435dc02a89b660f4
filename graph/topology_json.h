// Cluster descriptions a person can write: a shorthand ("8xH100", "2x8xA100", "4xV100+1xCPU") and a JSON
// format, both compiled to a Topology. docs/topology.md is the user's reference for both.
//
// Everything here takes untrusted input: errors come back as absl::Status naming the bad part (the shorthand
// term, or the JSON path such as "hosts[0].intra_host_link.bandwith"), and no exception leaves this API.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/precision.h"
#include "graph/topology.h"

namespace placement {

// Topology stores a path for every ordered device pair, so memory grows with the square of the device count;
// 1,024 devices (128 eight-GPU hosts) is about 100 MB to build, and larger requests are refused rather than
// allowed to exhaust a server.
inline constexpr int64_t kMaxTopologyDevices = 1024;

// Grammar (whitespace ignored, case-insensitive):
//   topology := term ('+' term)*          terms are devices of the same host(s)
//   term     := [hosts 'x'] [count 'x'] preset
// "4xA100" is one host with four A100s named gpu0..gpu3; "2x8xH100" is two hosts named host0 and host1 whose
// devices are host0/gpu0..host1/gpu7; "A100" is one device. With '+' every term must name the same number of
// hosts. Links come from the presets: a host uses the intra-host link of its first accelerator preset (or its
// first preset when it has none), and the network comes from the first accelerator preset of the cluster.
// The devices get the datasheet's figures (graph/measured_presets.h DatasheetRates).
absl::StatusOr<Topology> ParseTopologyShorthand(absl::string_view text);
// The same cluster with each device's figures for a job at `precision`: measured, or derived from measurements
// (graph/measured_presets.h); the topology's description names them. What --devices and the RPC's shorthand get.
absl::StatusOr<Topology> ParseTopologyShorthand(absl::string_view text, Precision precision);

// The JSON format: hierarchical ({"hosts": [...], "network": {...}}) or explicit ({"devices": [...]} with
// "links" matrices, a "shared_bus", or "resources" + "paths"). Unknown keys, missing fields and bad figures
// are InvalidArgument naming the JSON path; text that is not JSON is InvalidArgument with the parser's
// position.
absl::StatusOr<Topology> ParseTopologyJson(absl::string_view json_text);

// Reads and parses a JSON topology file. NotFound when it cannot be read; parse errors are prefixed with the
// path.
absl::StatusOr<Topology> LoadTopologyFile(const std::string& path);

// What a command-line flag or request field holds: inline JSON (starts with '{'), a file path (ends in
// ".json" or contains '/'), or else a shorthand.
absl::StatusOr<Topology> ParseTopologyArgument(absl::string_view spec);

// The explicit "resources" + "paths" form with every figure, so ParseTopologyJson(TopologyToJson(t)) gives
// back t exactly: devices, link resources (shared ones stay shared), latencies and path bandwidths.
std::string TopologyToJson(const Topology& topology);

}  // namespace placement

#include "graph/tarnawski.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

using json = nlohmann::json;

absl::StatusOr<json> ParseJson(absl::string_view text, absl::string_view what) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(what, " is not valid JSON"));
  if (!doc.is_object()) return absl::InvalidArgumentError(absl::StrCat(what, " must be a JSON object"));
  return doc;
}

// Reads a number field; the format writes flags both as 0/1 and as true/false, so booleans count as numbers.
absl::StatusOr<double> Number(const json& obj, const char* key, absl::string_view where, bool required = true,
                              double fallback = 0) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (!required) return fallback;
    return absl::InvalidArgumentError(absl::StrCat(where, ": missing field '", key, "'"));
  }
  double v;
  if (it->is_boolean()) {
    v = it->get<bool>() ? 1 : 0;
  } else if (it->is_number()) {
    v = it->get<double>();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(where, ": field '", key, "' must be a number"));
  }
  if (!std::isfinite(v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field '", key, "' must be a finite non-negative number (got ", v, ")"));
  }
  return v;
}

absl::StatusOr<int64_t> Integer(const json& obj, const char* key, absl::string_view where) {
  absl::StatusOr<double> v = Number(obj, key, where);
  if (!v.ok()) return v.status();
  if (*v != std::floor(*v) || *v > 9.0e18) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": field '", key, "' must be a whole number (got ", *v, ")"));
  }
  return static_cast<int64_t>(*v);
}

// A byte count: a number that also fits int64 (a larger one would overflow the conversion, found by fuzzing).
absl::StatusOr<double> Bytes(const json& obj, const char* key, absl::string_view where, bool required = true) {
  absl::StatusOr<double> v = Number(obj, key, where, required);
  if (v.ok() && *v > 9.0e18) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field '", key, "' is too large for a byte count (got ", *v, ")"));
  }
  return v;
}

std::string AcceleratorName(int64_t i) { return absl::StrCat("acc", i); }
std::string CpuName(int64_t i) { return absl::StrCat("cpu", i); }

constexpr int64_t kMaxDevices = 4096;

}  // namespace

bool LooksLikeTarnawskiGraph(absl::string_view json_text) {
  json doc = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  return doc.is_object() && doc.contains("nodes") && doc.contains("edges") && doc.contains("maxFPGAs");
}

bool LooksLikeTarnawskiSplit(absl::string_view json_text) {
  json doc = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  return doc.is_object() && doc.contains("fpgas");
}

namespace {

// The top level: k accelerators, CPU cores, memory per accelerator, and the node and edge arrays.
struct Header {
  int64_t accelerators = 0;
  int64_t cpus = 0;
  double capacity = 0;
};

absl::StatusOr<Header> ReadHeader(const json& doc) {
  Header h;
  ASSIGN_OR_RETURN(h.accelerators, Integer(doc, "maxFPGAs", "top level"));
  ASSIGN_OR_RETURN(h.cpus, Integer(doc, "maxCPUs", "top level"));
  ASSIGN_OR_RETURN(h.capacity, Number(doc, "maxSizePerFPGA", "top level"));
  if (h.accelerators < 1) return absl::InvalidArgumentError("top level: maxFPGAs must be at least 1");
  if (h.accelerators + h.cpus > kMaxDevices) {
    return absl::InvalidArgumentError(absl::StrCat("top level: more than ", kMaxDevices, " devices"));
  }
  if (h.capacity > 9.0e18) return absl::InvalidArgumentError("top level: maxSizePerFPGA is too large");
  for (const char* key : {"nodes", "edges"}) {
    if (!doc.contains(key) || !doc[key].is_array()) {
      return absl::InvalidArgumentError(absl::StrCat("top level: '", key, "' must be an array"));
    }
  }
  return h;
}

// What a node's single output costs to move: the cost of its out-edges, which the format says are equal.
struct OutInfo {
  double cost = -1;
  double bytes = 0;
};

struct Edges {
  absl::flat_hash_map<int64_t, OutInfo> out_info;
  std::vector<std::pair<int64_t, int64_t>> ids;
};

absl::StatusOr<Edges> ReadEdges(const json& edges) {
  Edges out;
  out.ids.reserve(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    const std::string where = absl::StrCat("edges[", i, "]");
    if (!edges[i].is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " must be an object"));
    ASSIGN_OR_RETURN(const int64_t src, Integer(edges[i], "sourceId", where));
    ASSIGN_OR_RETURN(const int64_t dst, Integer(edges[i], "destId", where));
    ASSIGN_OR_RETURN(const double cost, Number(edges[i], "cost", where));
    ASSIGN_OR_RETURN(const double size, Bytes(edges[i], "size", where, /*required=*/false));
    OutInfo& info = out.out_info[src];
    if (info.cost >= 0 && info.cost != cost) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": node ", src, " has out-edges with different costs (",
                                                     info.cost, " and ", cost,
                                                     "); the format requires one cost per node"));
    }
    info.cost = cost;
    info.bytes = std::max(info.bytes, size);
    out.ids.emplace_back(src, dst);
  }
  return out;
}

// A node as an operator: measured on "fpga" (when supported) and "cpu", its size resident, its colour class a
// colocation group, one output costing what its out-edges cost.
absl::StatusOr<OpSpec> ReadNode(const json& node, size_t i, const absl::flat_hash_map<int64_t, OutInfo>& out_info) {
  const std::string where = absl::StrCat("nodes[", i, "]");
  if (!node.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " must be an object"));
  ASSIGN_OR_RETURN(const int64_t id, Integer(node, "id", where));
  const std::string node_where = absl::StrCat(where, " (id ", id, ")");
  ASSIGN_OR_RETURN(const double supported, Number(node, "supportedOnFpga", node_where));
  ASSIGN_OR_RETURN(const double cpu, Number(node, "cpuLatency", node_where));
  ASSIGN_OR_RETURN(const double fpga, Number(node, "fpgaLatency", node_where));
  ASSIGN_OR_RETURN(const double backward, Number(node, "isBackwardNode", node_where, /*required=*/false));
  ASSIGN_OR_RETURN(const double size, Bytes(node, "size", node_where));
  if (size > 9.0e18) return absl::InvalidArgumentError(absl::StrCat(node_where, ": size is too large"));
  OpSpec op;
  op.name = absl::StrCat(id);
  op.op_type = "layer";
  if (supported != 0) op.measured_seconds.emplace_back(kTarnawskiAcceleratorKind, fpga);
  op.measured_seconds.emplace_back(kTarnawskiCpuKind, cpu);
  op.param_bytes = static_cast<int64_t>(size);
  op.is_backward = backward != 0;
  if (auto cc = node.find("colorClass"); cc != node.end() && !cc->is_null()) {
    ASSIGN_OR_RETURN(const int64_t color, Integer(node, "colorClass", node_where));
    op.colocation_group = absl::StrCat("color", color);
  }
  OutputTensor out;
  if (auto it = out_info.find(id); it != out_info.end()) {
    out.bytes = static_cast<int64_t>(it->second.bytes);
    out.transfer_seconds = it->second.cost;
  } else {
    out.transfer_seconds = 0;  // a sink: nothing ever moves it
  }
  op.outputs.push_back(out);
  return op;
}

// k accelerators "acc<i>" with the capacity and unlimited CPU cores "cpu<i>"; every time is measured, so the
// figures a roofline would use are placeholders, and each device gets its own link to host memory.
absl::StatusOr<Topology> TarnawskiTopology(const Header& h) {
  std::vector<Device> devices;
  for (int64_t i = 0; i < h.accelerators + h.cpus; ++i) {
    const bool accelerator = i < h.accelerators;
    Device d;
    d.name = accelerator ? AcceleratorName(i) : CpuName(i - h.accelerators);
    d.kind = accelerator ? kTarnawskiAcceleratorKind : kTarnawskiCpuKind;
    d.type = accelerator ? DeviceType::kAccelerator : DeviceType::kCpu;
    d.peak_flops = 1;
    d.memory_bandwidth = 1;
    d.memory_bytes = accelerator ? static_cast<int64_t>(h.capacity) : 0;
    devices.push_back(std::move(d));
  }
  return BuildSharedBus("tarnawski", std::move(devices), 1.0, 0.0);
}

}  // namespace

absl::StatusOr<Problem> ParseTarnawskiGraph(absl::string_view json_text) {
  ASSIGN_OR_RETURN(const json doc, ParseJson(json_text, "the Tarnawski graph"));
  ASSIGN_OR_RETURN(const Header header, ReadHeader(doc));
  ASSIGN_OR_RETURN(const Edges edges, ReadEdges(doc["edges"]));
  GraphBuilder builder;
  const json& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSIGN_OR_RETURN(OpSpec op, ReadNode(nodes[i], i, edges.out_info));
    builder.AddOp(std::move(op));
  }
  // Duplicate ids surface as duplicate operator names; unknown edge ends as dangling edges, both from Build().
  for (const auto& [src, dst] : edges.ids) builder.AddEdge(absl::StrCat(src), 0, absl::StrCat(dst));
  Problem problem;
  ASSIGN_OR_RETURN(problem.graph, std::move(builder).Build());
  ASSIGN_OR_RETURN(problem.topology, TarnawskiTopology(header));
  problem.time_unit = "input";
  return problem;
}

absl::StatusOr<Placement> ParseTarnawskiSplit(absl::string_view json_text, const Graph& graph,
                                              const Topology& topology) {
  absl::StatusOr<json> parsed = ParseJson(json_text, "the split");
  if (!parsed.ok()) return parsed.status();
  const json& doc = *parsed;
  Placement placement;
  placement.device.assign(graph.num_ops(), -1);
  auto assign = [&](const char* list, auto device_name) -> absl::Status {
    auto it = doc.find(list);
    if (it == doc.end()) return absl::OkStatus();
    if (!it->is_array()) return absl::InvalidArgumentError(absl::StrCat("'", list, "' must be an array"));
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string where = absl::StrCat(list, "[", i, "]");
      const json& part = (*it)[i];
      if (!part.is_object() || !part.contains("nodes") || !part["nodes"].is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(where, " must be an object with a 'nodes' array"));
      }
      const std::string name = device_name(i);
      const DeviceId d = topology.FindDevice(name);
      if (d < 0 && !part["nodes"].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, " needs device '", name, "', which the input does not have (", topology.num_devices(), " devices)"));
      }
      for (const json& id : part["nodes"]) {
        if (!id.is_number_integer())
          return absl::InvalidArgumentError(absl::StrCat(where, ": node ids must be integers"));
        const OpId op = graph.FindOp(absl::StrCat(id.get<int64_t>()));
        if (op == kNone)
          return absl::InvalidArgumentError(absl::StrCat(where, ": node ", id.get<int64_t>(), " is not in the graph"));
        if (placement.device[op] >= 0 && placement.device[op] != d) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": node ", id.get<int64_t>(), " is listed on two devices"));
        }
        placement.device[op] = d;
      }
    }
    return absl::OkStatus();
  };
  if (!doc.contains("fpgas")) return absl::InvalidArgumentError("the split has no 'fpgas' list");
  RETURN_IF_ERROR(assign("fpgas", AcceleratorName));
  RETURN_IF_ERROR(assign("cpus", CpuName));

  // Unlisted nodes follow their colour class.
  std::vector<DeviceId> group_device(graph.colocation_groups().size(), -1);
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (placement.device[op] >= 0 && graph.colocation_group(op) != kNone)
      group_device[graph.colocation_group(op)] = placement.device[op];
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (placement.device[op] >= 0) continue;
    const int32_t group = graph.colocation_group(op);
    if (group == kNone || group_device[group] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the split does not place node ", graph.name(op), " and no node of its colour class is listed"));
    }
    placement.device[op] = group_device[group];
  }
  return placement;
}

}  // namespace placement

#include "graph/topology_json_devices.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/topology_json.h"
#include "graph/units.h"

namespace placement::topology_json {
namespace {

// One entry of a "devices" list, before it is expanded into `count` named devices.
struct DeviceEntry {
  Device device;
  int64_t count = 1;
  bool named = false;
  const DevicePreset* preset = nullptr;
};

// The explicit form's devices may say which host they are on; in the hierarchical form the host's list does.
absl::Status CheckEntryKeys(const Json& j, absl::string_view path, bool explicit_form) {
  return explicit_form ? CheckObject(j, path,
                                     {"preset", "count", "name", "kind", "type", "peak_flops", "memory_bandwidth",
                                      "memory", "launch_overhead", "host_op_overhead", "host_backward_op_overhead",
                                      "efficiency", "backward_efficiency", "serial_bandwidth", "intensity_curves", "host"})
                       : CheckObject(j, path,
                                     {"preset", "count", "name", "kind", "type", "peak_flops", "memory_bandwidth",
                                      "memory", "launch_overhead", "host_op_overhead", "host_backward_op_overhead",
                                      "efficiency", "backward_efficiency", "serial_bandwidth", "intensity_curves"});
}

// The preset's device, the figures below then changing it; or, without a preset, a check that they are all given.
absl::Status ReadPreset(const Json& j, absl::string_view path, DeviceEntry& e) {
  if (const Json* p = Find(j, "preset")) {
    if (!p->is_string()) return Err(Child(path, "preset"), absl::StrCat("expected a string, got ", p->type_name()));
    absl::StatusOr<const DevicePreset*> preset = FindDevicePreset(p->get_ref<const std::string&>());
    if (!preset.ok()) return Err(Child(path, "preset"), preset.status().message());
    e.preset = *preset;
    e.device = MakeDevice(**preset, "");
    return absl::OkStatus();
  }
  // Without a preset every figure the cost model reads must be given; memory too, so that "no limit" is a
  // decision written down rather than a default.
  for (const char* key : {"kind", "peak_flops", "memory_bandwidth", "memory"}) {
    if (!j.contains(key)) {
      return Err(path, absl::StrCat("'", key, "' is required when no 'preset' is given",
                                    absl::string_view(key) == "memory" ? " (0 or \"unlimited\" for no limit)" : ""));
    }
  }
  return absl::OkStatus();
}

// "name", "kind" and "type".
absl::Status ReadIdentity(const Json& j, absl::string_view path, DeviceEntry& e) {
  for (const char* key : {"name", "kind"}) {
    if (const Json* v = Find(j, key)) {
      if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
        return Err(Child(path, key), "expected a non-empty string");
      }
      (absl::string_view(key) == "name" ? e.device.name : e.device.kind) = v->get<std::string>();
    }
  }
  e.named = j.contains("name");
  if (const Json* v = Find(j, "type")) {
    if (*v == "accelerator") {
      e.device.type = DeviceType::kAccelerator;
    } else if (*v == "cpu") {
      e.device.type = DeviceType::kCpu;
    } else {
      return Err(Child(path, "type"), absl::StrCat("expected \"accelerator\" or \"cpu\", got ", v->dump()));
    }
  }
  return absl::OkStatus();
}

// Speeds, per-class efficiencies and memory: each one given replaces the preset's.
absl::Status ReadFigures(const Json& j, absl::string_view path, Device& device) {
  struct Figure {
    const char* key;
    UnitParser parse;
    bool positive;
    double* out;
  };
  for (const Figure& f :
       {Figure{"peak_flops", ParseFlops, true, &device.peak_flops},
        Figure{"memory_bandwidth", ParseBandwidth, true, &device.memory_bandwidth},
        Figure{"launch_overhead", ParseSeconds, false, &device.launch_overhead},
        Figure{"host_op_overhead", ParseSeconds, false, &device.host_op_overhead},
        Figure{"host_backward_op_overhead", ParseSeconds, false, &device.host_backward_op_overhead}}) {
    if (const Json* v = Find(j, f.key)) {
      ASSIGN_OR_RETURN(*f.out, Quantity(*v, Child(path, f.key), f.parse, f.positive));
    }
  }
  for (auto [key, factors] :
       {std::pair{"efficiency", &device.efficiency}, std::pair{"backward_efficiency", &device.backward_efficiency}}) {
    if (const Json* v = Find(j, key)) {
      RETURN_IF_ERROR(ReadClassFactors(*v, Child(path, key), factors));
    }
  }
  if (const Json* v = Find(j, "serial_bandwidth")) {
    RETURN_IF_ERROR(ReadClassBandwidths(*v, Child(path, "serial_bandwidth"), &device.serial_bandwidth));
  }
  if (const Json* v = Find(j, "intensity_curves")) {
    RETURN_IF_ERROR(ReadIntensityCurves(*v, Child(path, "intensity_curves"), &device.intensity_curves));
  }
  if (const Json* v = Find(j, "memory")) {
    ASSIGN_OR_RETURN(device.memory_bytes, MemoryBytes(*v, Child(path, "memory")));
  }
  return absl::OkStatus();
}

// "host" (the explicit form's) and "count".
absl::Status ReadHostAndCount(const Json& j, absl::string_view path, DeviceEntry& e) {
  if (const Json* v = Find(j, "host")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() >= kMaxTopologyDevices) {
      return Err(Child(path, "host"),
                 absl::StrCat("expected a host index from 0 to ", kMaxTopologyDevices - 1, ", got ", v->dump()));
    }
    e.device.host = v->get<int32_t>();
  }
  if (const Json* v = Find(j, "count")) {
    ASSIGN_OR_RETURN(e.count, Count(*v, Child(path, "count")));
  }
  return absl::OkStatus();
}

absl::StatusOr<DeviceEntry> ReadDeviceEntry(const Json& j, absl::string_view path, bool explicit_form) {
  RETURN_IF_ERROR(CheckEntryKeys(j, path, explicit_form));
  DeviceEntry e;
  RETURN_IF_ERROR(ReadPreset(j, path, e));
  RETURN_IF_ERROR(ReadIdentity(j, path, e));
  RETURN_IF_ERROR(ReadFigures(j, path, e.device));
  RETURN_IF_ERROR(ReadHostAndCount(j, path, e));
  return e;
}

}  // namespace

absl::StatusOr<std::vector<Device>> ReadDevices(const Json& j, absl::string_view path, bool explicit_form,
                                                int64_t* total, std::vector<const DevicePreset*>* presets) {
  if (!j.is_array() || j.empty()) return Err(path, "expected a non-empty list of devices");
  std::vector<Device> out;
  int64_t gpus = 0, cpus = 0;
  for (size_t i = 0; i < j.size(); ++i) {
    absl::StatusOr<DeviceEntry> e = ReadDeviceEntry(j[i], Index(path, i), explicit_form);
    if (!e.ok()) return e.status();
    if ((*total += e->count) > kMaxTopologyDevices) {
      return Err(Index(path, i), absl::StrCat("the topology has more than ", kMaxTopologyDevices, " devices"));
    }
    if (e->preset) presets->push_back(e->preset);
    for (int64_t c = 0; c < e->count; ++c) {
      Device d = e->device;
      if (!e->named) {
        d.name = d.type == DeviceType::kCpu ? absl::StrCat("cpu", cpus++) : absl::StrCat("gpu", gpus++);
      } else if (e->count > 1) {
        absl::StrAppend(&d.name, c);
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace placement::topology_json

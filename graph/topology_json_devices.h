// The "devices" lists of the JSON topology format (topology_json.h): each entry a preset or every figure,
// expanded into `count` named devices. Used only inside the graph library.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/device_presets.h"
#include "graph/topology.h"
#include "graph/topology_json_fields.h"

namespace placement::topology_json {

// Expands a "devices" list (`explicit_form`: the top-level list, whose entries may say their "host"). Unnamed
// devices are gpu0, gpu1, ... and cpu0, ... in list order; a named entry with a count gets the index appended
// ("worker" x 2 -> worker0, worker1). *total counts the topology's devices so far, across lists; the presets
// the entries name are appended to *presets (their links are the defaults).
absl::StatusOr<std::vector<Device>> ReadDevices(const Json& j, absl::string_view path, bool explicit_form,
                                                int64_t* total, std::vector<const DevicePreset*>* presets);

}  // namespace placement::topology_json

#include "graph/device_presets.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/units.h"

namespace placement {
namespace {

// Capacities are the vendor's "GB" read as 10^9 bytes. Boards carry a little more (an "80GB" H100 reports
// 81,559 MiB), but part of it goes to the CUDA context and allocator slack, so the smaller figure is the
// safer bound for an out-of-memory check.
constexpr double kGB = 1e9;
constexpr double kTFLOPS = 1e12;
constexpr double kGbit = 1e9 / 8;
constexpr double kGpuLaunch = 5e-6;  // a CUDA kernel launch plus framework dispatch
constexpr double kCpuLaunch = 1e-6;  // an operator call in a CPU runtime

constexpr DevicePreset kPresets[] = {
    {.name = "H100",
     .model = "NVIDIA H100 SXM5 80GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 989 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 1,979 with sparsity",
     .memory_bandwidth = 3.35e12,
     .memory_bytes = static_cast<int64_t>(80 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 4: 900 GB/s total, 450 GB/s per direction",
     .intra_bandwidth = 450 * kGB,
     .intra_latency = 2e-6,
     .network = "InfiniBand NDR, 400 Gb/s per host",
     .network_bandwidth = 400 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column "
                 "(https://www.nvidia.com/en-us/data-center/h100/)",
     .fp32_flops = 67 * kTFLOPS,
     .tf32_flops = 494.5 * kTFLOPS,
     .bf16_flops = 989 * kTFLOPS,
     .fp16_flops = 989 * kTFLOPS,
     .measured_as = "H100"},
    {.name = "A100",
     .model = "NVIDIA A100 SXM4 80GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 312 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 624 with sparsity",
     .memory_bandwidth = 2039 * kGB,
     .memory_bytes = static_cast<int64_t>(80 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 3: 600 GB/s total, 300 GB/s per direction",
     .intra_bandwidth = 300 * kGB,
     .intra_latency = 2e-6,
     .network = "InfiniBand HDR, 200 Gb/s per host",
     .network_bandwidth = 200 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column "
                 "(https://www.nvidia.com/en-us/data-center/a100/)",
     .fp32_flops = 19.5 * kTFLOPS,
     .tf32_flops = 156 * kTFLOPS,
     .bf16_flops = 312 * kTFLOPS,
     .fp16_flops = 312 * kTFLOPS,
     .measured_as = ""},
    {.name = "V100",
     .model = "NVIDIA Tesla V100 SXM2 32GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 125 * kTFLOPS,
     .flops_basis = "FP16 Tensor Core",
     .memory_bandwidth = 900 * kGB,
     .memory_bytes = static_cast<int64_t>(32 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 2: 300 GB/s total, 150 GB/s per direction",
     .intra_bandwidth = 150 * kGB,
     .intra_latency = 2e-6,
     .network = "InfiniBand EDR, 100 Gb/s per host",
     .network_bandwidth = 100 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA Tesla V100 GPU datasheet, V100 SXM2 column "
                 "(https://www.nvidia.com/en-us/data-center/v100/)",
     .fp32_flops = 15.7 * kTFLOPS,
     .fp16_flops = 125 * kTFLOPS,
     .measured_as = ""},
    {.name = "P100",
     .model = "NVIDIA Tesla P100 SXM2 16GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 21.2e12,
     .flops_basis = "FP16",
     .memory_bandwidth = 732 * kGB,
     .memory_bytes = static_cast<int64_t>(16 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 1: 160 GB/s total, 80 GB/s per direction",
     .intra_bandwidth = 80 * kGB,
     .intra_latency = 2e-6,
     .network = "InfiniBand EDR, 100 Gb/s per host",
     .network_bandwidth = 100 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA Tesla P100 datasheet, P100 for NVLink-optimized servers column "
                 "(https://www.nvidia.com/en-us/data-center/tesla-p100/)",
     .fp32_flops = 10.6 * kTFLOPS,
     .fp16_flops = 21.2 * kTFLOPS,
     .measured_as = ""},
    {.name = "T4",
     .model = "NVIDIA T4 16GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 65 * kTFLOPS,
     .flops_basis = "FP16 Tensor Core, mixed precision",
     .memory_bandwidth = 320 * kGB,
     .memory_bytes = static_cast<int64_t>(16 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "PCIe Gen3 x16: 32 GB/s total, about 16 GB/s per direction",
     .intra_bandwidth = 16 * kGB,
     .intra_latency = 5e-6,
     .network = "Ethernet, 25 Gb/s per host",
     .network_bandwidth = 25 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA T4 Tensor Core GPU datasheet (https://www.nvidia.com/en-us/data-center/tesla-t4/)",
     .fp32_flops = 8.1 * kTFLOPS,
     .fp16_flops = 65 * kTFLOPS,
     .measured_as = ""},
    {.name = "CPU",
     .model = "AMD EPYC 7763, 64 cores, 8 x DDR4-3200, 512 GiB",
     .type = DeviceType::kCpu,
     .peak_flops = 64 * 2.45e9 * 32,
     .flops_basis = "FP32 AVX2 FMA at base clock",
     .memory_bandwidth = 204.8e9,
     .memory_bytes = int64_t{512} << 30,
     .launch_overhead = kCpuLaunch,
     .intra_link = "copies through DRAM: half of its 204.8 GB/s",
     .intra_bandwidth = 102.4e9,
     .intra_latency = 1e-6,
     .network = "Ethernet, 25 Gb/s per host",
     .network_bandwidth = 25 * kGbit,
     .network_latency = 5e-6,
     .citation = "AMD EPYC 7763 product specifications: 64 cores, 2.45 GHz base, 8 channels of DDR4-3200 "
                 "(https://www.amd.com/en/products/cpu/amd-epyc-7763)",
     .fp32_flops = 64 * 2.45e9 * 32,
     .measured_as = ""},
    // The GPUs of NVIDIA's DGX systems: the A100 and H100 above, each with its own InfiniBand adapter, so a host
    // talks to the network at eight times one adapter's rate (Selene, the cluster Megatron-LM's runs report).
    {.name = "DGXA100",
     .model = "NVIDIA A100 SXM4 80GB in a DGX A100 (8 GPUs, NVSwitch, 8 HDR adapters)",
     .type = DeviceType::kAccelerator,
     .peak_flops = 312 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 624 with sparsity",
     .memory_bandwidth = 2039 * kGB,
     .memory_bytes = static_cast<int64_t>(80 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 3 through NVSwitch: 600 GB/s total, 300 GB/s per direction",
     .intra_bandwidth = 300 * kGB,
     .intra_latency = 2e-6,
     .network = "8 x InfiniBand HDR, 8 x 200 Gb/s per host",
     .network_bandwidth = 8 * 200 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA DGX A100 datasheet: 8 A100 80GB, 8 single-port ConnectX-6 200 Gb/s HDR for compute "
                 "(https://www.nvidia.com/en-us/data-center/dgx-a100/)",
     .fp32_flops = 19.5 * kTFLOPS,
     .tf32_flops = 156 * kTFLOPS,
     .bf16_flops = 312 * kTFLOPS,
     .fp16_flops = 312 * kTFLOPS,
     .measured_as = ""},
    {.name = "DGXH100",
     .model = "NVIDIA H100 SXM5 80GB in a DGX H100 (8 GPUs, NVSwitch, 8 NDR adapters)",
     .type = DeviceType::kAccelerator,
     .peak_flops = 989 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 1,979 with sparsity",
     .memory_bandwidth = 3.35e12,
     .memory_bytes = static_cast<int64_t>(80 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 4 through NVSwitch: 900 GB/s total, 450 GB/s per direction",
     .intra_bandwidth = 450 * kGB,
     .intra_latency = 2e-6,
     .network = "8 x InfiniBand NDR, 8 x 400 Gb/s per host",
     .network_bandwidth = 8 * 400 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA DGX H100 datasheet: 8 H100 80GB, 8 ConnectX-7 400 Gb/s NDR for compute "
                 "(https://www.nvidia.com/en-us/data-center/dgx-h100/)",
     .fp32_flops = 67 * kTFLOPS,
     .tf32_flops = 494.5 * kTFLOPS,
     .bf16_flops = 989 * kTFLOPS,
     .fp16_flops = 989 * kTFLOPS,
     .measured_as = "H100"},
    // Newer presets go last: messages and docs list the presets in this order.
    {.name = "H200",
     .model = "NVIDIA H200 SXM 141GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 989 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 1,979 with sparsity",
     .memory_bandwidth = 4.8e12,
     .memory_bytes = static_cast<int64_t>(141 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "NVLink 4: 900 GB/s total, 450 GB/s per direction",
     .intra_bandwidth = 450 * kGB,
     .intra_latency = 2e-6,
     .network = "InfiniBand NDR, 400 Gb/s per host",
     .network_bandwidth = 400 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column "
                 "(https://www.nvidia.com/en-us/data-center/h200/)",
     .fp32_flops = 67 * kTFLOPS,
     .tf32_flops = 494.5 * kTFLOPS,
     .bf16_flops = 989 * kTFLOPS,
     .fp16_flops = 989 * kTFLOPS,
     .measured_as = "H200"},
    {.name = "L4",
     .model = "NVIDIA L4 24GB",
     .type = DeviceType::kAccelerator,
     .peak_flops = 121 * kTFLOPS,
     .flops_basis = "BF16 Tensor Core, dense; 242 with sparsity",
     .memory_bandwidth = 300 * kGB,
     .memory_bytes = static_cast<int64_t>(24 * kGB),
     .launch_overhead = kGpuLaunch,
     .intra_link = "PCIe Gen4 x16: 64 GB/s total, about 32 GB/s per direction",
     .intra_bandwidth = 32 * kGB,
     .intra_latency = 5e-6,
     .network = "Ethernet, 25 Gb/s per host",
     .network_bandwidth = 25 * kGbit,
     .network_latency = 5e-6,
     .citation = "NVIDIA L4 Tensor Core GPU datasheet (https://www.nvidia.com/en-us/data-center/l4/)",
     .fp32_flops = 30.3 * kTFLOPS,
     .tf32_flops = 60 * kTFLOPS,
     .bf16_flops = 121 * kTFLOPS,
     .fp16_flops = 121 * kTFLOPS,
     .measured_as = ""},
    // 64 cores x 2.45 GHz base x 32 FP32 FLOP/cycle (Zen 3: two 256-bit FMA pipes = 2 x 8 lanes x 2 FLOP).
    // Two CPU devices of one host exchange tensors through DRAM, which a copy crosses twice (read, write).
};

}  // namespace

absl::Span<const DevicePreset> DevicePresets() { return kPresets; }

absl::StatusOr<const DevicePreset*> FindDevicePreset(absl::string_view name) {
  for (const DevicePreset& p : kPresets) {
    if (absl::EqualsIgnoreCase(p.name, name)) return &p;
  }
  return absl::NotFoundError(absl::StrCat("unknown device preset '", name, "'; known presets: ", DevicePresetNames()));
}

Device MakeDevice(const DevicePreset& preset, std::string name) {
  Device d;
  d.name = std::move(name);
  d.kind = std::string(preset.name);
  d.type = preset.type;
  d.peak_flops = preset.peak_flops;
  d.memory_bandwidth = preset.memory_bandwidth;
  d.memory_bytes = preset.memory_bytes;
  d.launch_overhead = preset.launch_overhead;
  return d;
}

std::string DevicePresetNames() {
  return absl::StrJoin(kPresets, ", ", [](std::string* out, const DevicePreset& p) { absl::StrAppend(out, p.name); });
}

std::string DescribeDevicePresets() {
  std::string out;
  for (const DevicePreset& p : kPresets) {
    // Capacities show both readings, since "80 GB" on a datasheet and "74.5 GiB" alone look like a mistake.
    absl::StrAppendFormat(&out,
                          "%-5s %s: %s (%s), %g GB (%s) memory at %s; in a host %s; between hosts %s. "
                          "Source: %s\n",
                          p.name, p.model, FormatFlops(p.peak_flops), p.flops_basis, p.memory_bytes / kGB,
                          FormatBytes(p.memory_bytes), FormatBandwidth(p.memory_bandwidth), p.intra_link, p.network,
                          p.citation);
  }
  absl::StrAppend(&out,
                  "\nThe lines above are the vendors' datasheets. What a job gets from --devices depends on its "
                  "--precision and is measured where it can be (below; layer-level transformer plans keep the "
                  "datasheet's peaks, against which their GEMM efficiency was fitted). Measured figures for your own "
                  "host: placectl calibrate (docs/measured-costs.md).\n");
  return out;
}

const DevicePreset* LinkPresetFor(const std::vector<const DevicePreset*>& presets) {
  for (const DevicePreset* p : presets) {
    if (p->type == DeviceType::kAccelerator) return p;
  }
  return presets.empty() ? nullptr : presets.front();
}

}  // namespace placement

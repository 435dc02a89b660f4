#include "graph/measured_presets.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "graph/calibration.h"
#include "graph/measured_tables.h"
#include "graph/op_class.h"
#include "graph/units.h"

namespace placement {
namespace {

// The device whose tables other GPUs' figures are derived from.
constexpr absl::string_view kReference = "H100";

enum class Table { kFloat32, kBfloat16 };

absl::string_view TableName(Table t) { return t == Table::kFloat32 ? "float32" : "bfloat16"; }

bool Is16Bit(Precision p) { return p != Precision::kFp32; }
bool IsFp16(Precision p) { return p == Precision::kAmpFp16 || p == Precision::kFp16; }

// The arithmetic a precision's matrix products run on, on `preset`: FP16 or BF16 tensor cores, else FP32 (a GPU
// without BF16 runs bfloat16 at float32's rate: PyTorch emulates it there).
double MathRate(const DevicePreset& preset, Precision p) {
  if (IsFp16(p) && preset.fp16_flops > 0) return preset.fp16_flops;
  if (Is16Bit(p) && !IsFp16(p) && preset.bf16_flops > 0) return preset.bf16_flops;
  return preset.fp32_flops;
}

Table TableFor(const DevicePreset& preset, Precision p) {
  return MathRate(preset, p) == preset.fp32_flops ? Table::kFloat32 : Table::kBfloat16;
}

// The compiled-in tables, each parsed and calibrated once.
absl::StatusOr<const Calibration*> MeasuredTable(absl::string_view device, Table table) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* parsed = new std::map<std::string, absl::StatusOr<Calibration>>();
  const std::string name = absl::StrCat(absl::AsciiStrToLower(device), "_", TableName(table));
  absl::MutexLock lock(&mu);
  auto it = parsed->find(name);
  if (it == parsed->end()) {
    absl::StatusOr<Calibration> c = absl::NotFoundError(absl::StrCat("no measured table ", name));
    for (const MeasuredTableText& t : MeasuredTableTexts()) {
      if (t.name == name) c = ParseMeasurements(t.json);
    }
    if (!c.ok()) c = absl::InternalError(absl::StrCat("measured table ", name, ": ", c.status().message()));
    it = parsed->emplace(name, std::move(c)).first;
  }
  if (!it->second.ok()) return it->second.status();
  return &*it->second;
}

bool IsConvClass(int c) {
  return c == static_cast<int>(OpClass::kConv) || c == static_cast<int>(OpClass::kThinConv) ||
         c == static_cast<int>(OpClass::kWideThinConv) || c == static_cast<int>(OpClass::kChannelsLastThinConv);
}

// A float32 step's convolutions run on TF32 tensor cores (PyTorch's default) where the device has them: scaled by
// the TF32 rates rather than the FP32 ones, and never slower than FP32 arithmetic (the matrix products' share).
void ScaleFloat32Convolutions(const DevicePreset& reference, const DevicePreset& target, Device& d) {
  const double gemm = d.efficiency[static_cast<int>(OpClass::kGemm)];
  const double tf32 = target.tf32_flops > 0 && reference.tf32_flops > 0
                          ? (target.tf32_flops / reference.tf32_flops) / (target.fp32_flops / reference.fp32_flops)
                          : 0;
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (!IsConvClass(c)) continue;
    d.efficiency[c] = std::max(d.efficiency[c] * tf32, std::min(d.efficiency[c], gemm));
  }
}

std::string FiguresText(const Device& d) {
  return absl::StrCat(FormatFlops(d.peak_flops), ", ", FormatBandwidth(d.memory_bandwidth), ", ",
                      FormatSeconds(d.launch_overhead), " per launch");
}

PresetRates Measured(const DevicePreset& preset, Precision p, const Calibration& table) {
  PresetRates r;
  r.device = table.device;
  r.compute = IsFp16(p) ? FigureSource::kDerived : FigureSource::kMeasured;
  r.bandwidth = r.overheads = FigureSource::kMeasured;
  r.description = absl::StrCat(
      preset.name, " at ", PrecisionName(p), ": measured (", table.source, ", ", TableName(TableFor(preset, p)),
      IsFp16(p) ? " table: FP16 at BF16's tensor-core rate" : "", "): ", FiguresText(r.device));
  return r;
}

// The rate of the arithmetic `table` runs on: the float32 table's FP32 matrix products, else the precision's.
double TableRate(const DevicePreset& preset, Table table, Precision p) {
  return table == Table::kFloat32 ? preset.fp32_flops : MathRate(preset, p);
}

PresetRates Derived(const DevicePreset& reference, const DevicePreset& target, Precision p, const Calibration& table) {
  const Table t = TableFor(target, p);
  PresetRates r;
  r.device = table.device;
  r.device.peak_flops *= TableRate(target, t, p) / TableRate(reference, t, p);
  r.device.memory_bandwidth *= target.memory_bandwidth / reference.memory_bandwidth;
  if (t == Table::kFloat32) ScaleFloat32Convolutions(reference, target, r.device);
  r.compute = r.bandwidth = FigureSource::kDerived;
  r.overheads = FigureSource::kMeasured;  // the host's, not the GPU's
  r.description = absl::StrFormat(
      "%s at %s: derived from the %s's %s measurements (%s) by the datasheets' ratios (%s / %s, %s / %s): %s, "
      "launches and host work as on the %s's host",
      target.name, PrecisionName(p), reference.name, TableName(t), table.source, FormatFlops(TableRate(target, t, p)),
      FormatFlops(TableRate(reference, t, p)), FormatBandwidth(target.memory_bandwidth),
      FormatBandwidth(reference.memory_bandwidth), FiguresText(r.device), reference.name);
  return r;
}

}  // namespace

absl::string_view FigureSourceName(FigureSource s) {
  switch (s) {
    case FigureSource::kMeasured:
      return "measured";
    case FigureSource::kDerived:
      return "derived";
    case FigureSource::kDatasheet:
      return "datasheet";
  }
  return "datasheet";
}

PresetRates DatasheetRates(const DevicePreset& preset) {
  PresetRates r;
  r.device = MakeDevice(preset, "");
  r.description =
      absl::StrCat(preset.name, ": datasheet (", FormatFlops(preset.peak_flops), " ", preset.flops_basis, ", ",
                   FormatBandwidth(preset.memory_bandwidth), "; every operator class at the roofline)");
  return r;
}

absl::StatusOr<PresetRates> RatesForPrecision(const DevicePreset& preset, Precision precision) {
  if (preset.type != DeviceType::kAccelerator || preset.fp32_flops <= 0) {
    PresetRates r = DatasheetRates(preset);
    absl::StrAppend(&r.description, "; placectl calibrate measures the host it runs on");
    return r;
  }
  const bool own = !preset.measured_as.empty();
  absl::StatusOr<const DevicePreset*> reference = FindDevicePreset(own ? preset.measured_as : kReference);
  if (!reference.ok()) return absl::InternalError(reference.status().message());
  absl::StatusOr<const Calibration*> table = MeasuredTable((*reference)->name, TableFor(preset, precision));
  if (!table.ok()) return table.status();
  PresetRates r = own ? Measured(preset, precision, **table) : Derived(**reference, preset, precision, **table);
  r.device.name.clear();
  r.device.kind = std::string(preset.name);
  r.device.type = preset.type;
  r.device.memory_bytes = preset.memory_bytes;
  absl::StrAppend(&r.description, "; memory ", FormatBytes(preset.memory_bytes), " (datasheet)");
  return r;
}

namespace {

// Whether `d` is a preset's device as the datasheet describes it (kind the preset's name, no figure overridden).
const DevicePreset* UnchangedPreset(const Device& d) {
  absl::StatusOr<const DevicePreset*> preset = FindDevicePreset(d.kind);
  if (!preset.ok()) return nullptr;
  const Device datasheet = MakeDevice(**preset, d.name);
  const bool same = d.peak_flops == datasheet.peak_flops && d.memory_bandwidth == datasheet.memory_bandwidth &&
                    d.launch_overhead == datasheet.launch_overhead && d.host_op_overhead == 0 &&
                    d.host_backward_op_overhead == 0 && d.efficiency == kUnitFactors &&
                    d.backward_efficiency == kUnitFactors && d.serial_bandwidth == ClassFactors{} &&
                    d.intensity_curves == ClassCurves{} &&
                    d.type == datasheet.type;
  return same ? *preset : nullptr;
}

}  // namespace

absl::StatusOr<Topology> WithPresetFigures(const Topology& topology, Precision precision, absl::string_view source) {
  std::vector<std::string> lines;
  bool all_presets = true;
  absl::Status failed;
  Topology out = topology.WithDeviceFigures([&](const Device& d) {
    const DevicePreset* preset = UnchangedPreset(d);
    all_presets = all_presets && preset != nullptr;
    if (preset == nullptr) return d;
    absl::StatusOr<PresetRates> r = RatesForPrecision(*preset, precision);
    if (!r.ok()) {
      failed = r.status();
      return d;
    }
    if (std::find(lines.begin(), lines.end(), r->description) == lines.end()) lines.push_back(r->description);
    return r->device;
  });
  if (!failed.ok()) return failed;
  std::string description = absl::StrJoin(lines, "; ");
  if (!all_presets) {
    absl::StrAppend(&description, description.empty() ? "" : "; ", "the figures of ", source,
                    lines.empty() ? "" : " for its other devices");
  }
  out.set_description(std::move(description));
  return out;
}

std::string DescribePresetRates() {
  std::string out =
      "What a job at each precision gets from a preset (--devices): measured on the device itself, derived from "
      "the H100's measurements by the datasheets' ratios, or the datasheet's figures (graph/measured_presets.h):\n";
  for (const DevicePreset& p : DevicePresets()) {
    for (Precision precision : {Precision::kFp32, Precision::kAmpBf16}) {
      absl::StatusOr<PresetRates> r = RatesForPrecision(p, precision);
      if (!r.ok()) {
        absl::StrAppend(&out, "  ", p.name, " at ", PrecisionName(precision), ": ", r.status().message(), "\n");
        continue;
      }
      absl::StrAppend(&out, "  [compute ", FigureSourceName(r->compute), ", bandwidth ", FigureSourceName(r->bandwidth),
                      ", overheads ", FigureSourceName(r->overheads), "] ", r->description, "\n");
      if (p.type != DeviceType::kAccelerator) break;  // one line: a CPU preset has no table by precision
    }
  }
  return out;
}

}  // namespace placement

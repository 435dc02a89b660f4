#include "policy/learned/host_calibration.h"

#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "absl/strings/str_cat.h"
#include "graph/cost_model.h"
#include "policy/learned/torch_device.h"

namespace placement::learned {
namespace {

constexpr double kFloat = 4;  // bytes of a float32

// One benchmark layer: its inputs, its forward, and the FLOPs and bytes the ONNX importer would count for it.
struct Layer {
  OpClass op_class;
  std::string name;
  double flops;
  double bytes;
  std::function<std::vector<torch::Tensor>()> inputs;  // made once, outside the timing
  std::function<torch::Tensor(const std::vector<torch::Tensor>&)> forward;
  int backward_ops = 0;  // operators of its training-step backward (0: backward not measured)
};

double Seconds(const std::function<void()>& run, double budget) {
  run();  // warm: allocator, caches, lazily built kernels
  double best = 1e300;
  for (int attempt = 0; attempt < 3; ++attempt) {
    int repeats = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    do {
      run();
      ++repeats;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (elapsed < budget);
    best = std::min(best, elapsed / repeats);
  }
  return best;
}

Layer Conv(int64_t n, int64_t c, int64_t hw, int64_t out, int64_t k, int64_t stride, int64_t groups) {
  const int64_t pad = k / 2, ohw = (hw + 2 * pad - k) / stride + 1;
  const double outputs = static_cast<double>(n * out * ohw * ohw),
               weights = static_cast<double>(out * c / groups * k * k);
  return Layer{
      OpClass::kConv,
      absl::StrCat("conv ", c, "->", out, " ", k, "x", k, "/", stride, " g", groups, " on ", hw, "x", hw),
      2 * outputs * static_cast<double>(c / groups * k * k),
      kFloat * (static_cast<double>(n * c * hw * hw) + weights + outputs),
      [=] {
        return std::vector<torch::Tensor>{torch::randn({n, c, hw, hw}), torch::randn({out, c / groups, k, k})};
      },
      [=](const std::vector<torch::Tensor>& t) { return torch::conv2d(t[0], t[1], {}, stride, pad, 1, groups); },
      2};
}

Layer Linear(int64_t m, int64_t k, int64_t n) {
  return Layer{OpClass::kGemm,
               absl::StrCat("linear ", m, "x", k, " by ", k, "x", n),
               2.0 * m * k * n + m * n,
               kFloat * (m * k + k * n + n + m * n),
               [=] {
                 return std::vector<torch::Tensor>{torch::randn({m, k}), torch::randn({n, k}), torch::randn({n})};
               },
               [](const std::vector<torch::Tensor>& t) { return torch::linear(t[0], t[1], t[2]); },
               2};
}

Layer BatchedMatMul(int64_t b, int64_t m, int64_t k, int64_t n) {
  return Layer{OpClass::kGemm,
               absl::StrCat("matmul ", b, "x", m, "x", k, " by ", k, "x", n),
               2.0 * b * m * k * n,
               kFloat * b * (m * k + k * n + m * n),
               [=] {
                 return std::vector<torch::Tensor>{torch::randn({b, m, k}), torch::randn({b, k, n})};
               },
               [](const std::vector<torch::Tensor>& t) { return torch::matmul(t[0], t[1]); },
               2};
}

// An operator reading `inputs` tensors of `shape` and writing one, at `flops_per_output` per element.
Layer Pointwise(OpClass cls, const std::string& name, std::vector<int64_t> shape, int inputs, double flops_per_output,
                std::function<torch::Tensor(const std::vector<torch::Tensor>&)> forward, int backward_ops = 1) {
  double elements = 1;
  for (int64_t d : shape) elements *= static_cast<double>(d);
  return Layer{cls,
               name,
               flops_per_output * elements,
               kFloat * elements * (inputs + 1),
               [=] {
                 std::vector<torch::Tensor> t;
                 for (int i = 0; i < inputs; ++i) t.push_back(torch::randn(shape));
                 return t;
               },
               std::move(forward),
               backward_ops};
}

Layer WithBytes(Layer layer, double bytes) {
  layer.bytes = bytes;
  return layer;
}

std::vector<Layer> Layers() {
  using T = const std::vector<torch::Tensor>&;
  std::vector<Layer> layers = {
      Linear(8, 512, 1000),
      Linear(8 * 197, 768, 3072),
      Linear(8 * 197, 768, 768),
      BatchedMatMul(96, 197, 64, 197),
      Conv(8, 3, 224, 64, 7, 2, 1),
      Conv(8, 64, 56, 64, 3, 1, 1),
      Conv(8, 128, 28, 128, 3, 1, 1),
      Conv(8, 256, 14, 256, 3, 1, 1),
      Conv(8, 64, 56, 256, 1, 1, 1),
      Conv(8, 512, 7, 2048, 1, 1, 1),
      Conv(8, 32, 112, 32, 3, 1, 32),
      Conv(8, 144, 56, 144, 3, 2, 144),
      Conv(8, 240, 28, 240, 5, 1, 240),
      Conv(8, 960, 7, 960, 3, 1, 960),
      Pointwise(OpClass::kPooling, "maxpool 3x3/2 64x112x112", {8, 64, 112, 112}, 1, 0,
                [](T t) { return torch::max_pool2d(t[0], 3, 2, 1); }),
      // The importer counts inputs plus outputs: the global pool writes one value per channel.
      WithBytes(Pointwise(OpClass::kNormalization, "global average pool 512x7x7", {8, 512, 7, 7}, 1, 0,
                          [](T t) {
                            return torch::adaptive_avg_pool2d(t[0], {1, 1});
                          }),
                kFloat * (8.0 * 512 * 49 + 8 * 512)),
      Pointwise(OpClass::kNormalization, "batchnorm 64x56x56", {8, 64, 56, 56}, 1, 5,
                [](T t) {
                  return torch::batch_norm(t[0], {}, {}, torch::zeros({64}), torch::ones({64}), false, 0.1, 1e-5,
                                           false);
                }),
      Pointwise(OpClass::kNormalization, "layernorm 197x768", {8, 197, 768}, 1, 8,
                [](T t) { return torch::layer_norm(t[0], {768}); }),
      Pointwise(OpClass::kNormalization, "softmax 12x197x197", {8, 12, 197, 197}, 1, 5,
                [](T t) { return torch::softmax(t[0], -1); }),
      Pointwise(OpClass::kElementwise, "relu 64x56x56", {8, 64, 56, 56}, 1, 1, [](T t) { return torch::relu(t[0]); }),
      Pointwise(OpClass::kElementwise, "add 256x56x56", {8, 256, 56, 56}, 2, 1, [](T t) { return t[0] + t[1]; }),
      Pointwise(OpClass::kElementwise, "sigmoid 32x112x112", {8, 32, 112, 112}, 1, 4,
                [](T t) { return torch::sigmoid(t[0]); }),
      Pointwise(OpClass::kElementwise, "gelu 197x3072", {8, 197, 3072}, 1, 8, [](T t) { return torch::gelu(t[0]); }),
      WithBytes(Pointwise(OpClass::kDataMovement, "concat 2x128x28x28", {8, 128, 28, 28}, 2, 0,
                          [](T t) {
                            return torch::cat({t[0], t[1]}, 1);
                          }),
                kFloat * 4 * (8.0 * 128 * 28 * 28)),
      Pointwise(OpClass::kDataMovement, "transpose 197x12x64", {8, 197, 12, 64}, 1, 0,
                [](T t) {
                  return t[0].permute({0, 2, 1, 3}).contiguous();
                }),
  };
  layers.push_back(Layer{OpClass::kView, "reshape 512x7x7", 0, kFloat * 8 * 512 * 49,
                         [] {
                           return std::vector<torch::Tensor>{torch::randn({8, 512, 7, 7})};
                         },
                         [](T t) {
                           return t[0].reshape({8, -1});
                         },
                         0});
  return layers;
}

void Measure(const Layer& layer, double budget, CalibrationLine* line) {
  const std::vector<torch::Tensor> inputs = layer.inputs();
  {
    torch::NoGradGuard no_grad;
    line->forward_seconds = Seconds([&] { layer.forward(inputs); }, budget);
  }
  if (layer.backward_ops == 0) return;
  std::vector<torch::Tensor> leaves;
  for (const torch::Tensor& t : inputs) leaves.push_back(t.detach().requires_grad_(true));
  const double with_grad = Seconds([&] { layer.forward(leaves); }, budget);
  const double step = Seconds([&] { layer.forward(leaves).sum().backward(); }, budget);
  line->backward_seconds = std::max(step - with_grad, 0.0);
}

double AdamSeconds(int64_t params, double budget) {
  torch::Tensor w = torch::randn({params}).requires_grad_(true);
  w.mutable_grad() = torch::randn({params});
  torch::optim::Adam adam({w});
  return Seconds([&] { adam.step(); }, budget);
}

}  // namespace

absl::StatusOr<Calibration> CalibrateHost(const CalibrationOptions& options) {
  if (absl::Status s = SetTorchThreads(options.threads); !s.ok()) return s;
  Calibration out;
  Device& d = out.device;
  d.name = "cpu0";
  d.kind = options.kind;
  d.type = DeviceType::kCpu;
  d.memory_bytes = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  const double budget = options.seconds_per_measurement;
  std::string layer_name = "peak GEMM";
  try {
    torch::NoGradGuard no_grad;
    const torch::Tensor a = torch::randn({1024, 1024}), b = torch::randn({1024, 1024});
    d.peak_flops = 2.0 * 1024 * 1024 * 1024 / Seconds([&] { torch::mm(a, b); }, budget);
    layer_name = "memory copy";
    torch::Tensor big = torch::randn({32 << 20}), copy = torch::empty_like(big);
    d.memory_bandwidth = 2 * kFloat * big.numel() / Seconds([&] { copy.copy_(big); }, budget);
    layer_name = "launch overhead";
    const torch::Tensor one = torch::ones({1});
    d.launch_overhead = Seconds([&] { torch::add(one, one); }, budget);
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("calibration failed at ", layer_name, ": ", e.what_without_backtrace()));
  }
  std::vector<double> roof(kNumOpClasses, 0), spent(kNumOpClasses, 0), back_model(kNumOpClasses, 0),
      back_spent(kNumOpClasses, 0);
  for (const Layer& layer : Layers()) {
    // Classed as the cost model classes the importer's operators: by type, then by intensity.
    const OpClass op_class = RefineByIntensity(layer.op_class, layer.flops, layer.bytes);
    CalibrationLine line{std::string(OpClassName(op_class)), layer.name, layer.flops, layer.bytes};
    try {
      Measure(layer, budget, &line);
    } catch (const c10::Error& e) {
      return absl::InternalError(absl::StrCat("calibration failed at ", layer.name, ": ", e.what_without_backtrace()));
    }
    const int c = static_cast<int>(op_class);
    const double roofline = RooflineSeconds(layer.flops, layer.bytes, d);
    roof[c] += roofline;
    spent[c] += std::max(line.forward_seconds - d.launch_overhead, 0.05 * line.forward_seconds);
    if (layer.backward_ops > 0) {
      back_model[c] += 2 * roofline;  // divided by the forward efficiency below
      back_spent[c] +=
          std::max(line.backward_seconds - layer.backward_ops * d.launch_overhead, 0.05 * line.backward_seconds);
    }
    out.lines.push_back(std::move(line));
  }
  const double adam_params = 4 << 20;
  const double adam = AdamSeconds(static_cast<int64_t>(adam_params), budget);
  out.lines.push_back(
      CalibrationLine{"optimizer", "adam 4M parameters", 10 * adam_params, 7 * kFloat * adam_params, adam});
  const int optimizer = static_cast<int>(OpClass::kOptimizer);
  roof[optimizer] = RooflineSeconds(10 * adam_params, 7 * kFloat * adam_params, d);
  spent[optimizer] = std::max(adam - d.launch_overhead, 0.05 * adam);
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (spent[c] > 0) d.efficiency[c] = ClampEfficiency(roof[c] / spent[c]);
    if (back_spent[c] > 0) d.backward_efficiency[c] = ClampEfficiency(back_model[c] / d.efficiency[c] / back_spent[c]);
  }
  const int other = static_cast<int>(OpClass::kOther), elementwise = static_cast<int>(OpClass::kElementwise);
  d.efficiency[other] = d.efficiency[elementwise];
  d.backward_efficiency[other] = d.backward_efficiency[elementwise];
  return out;
}

}  // namespace placement::learned

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
  int32_t window = 0;    // a convolution's kernel window, kh x kw
  bool channels_last = false;  // its input laid out channels-last, as the importer marks ConvNeXt's
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
  Layer layer{
      OpClass::kConv,
      absl::StrCat("conv ", c, "->", out, " ", k, "x", k, "/", stride, " g", groups, " on ", hw, "x", hw),
      2 * outputs * static_cast<double>(c / groups * k * k),
      kFloat * (static_cast<double>(n * c * hw * hw) + weights + outputs),
      [=] {
        return std::vector<torch::Tensor>{torch::randn({n, c, hw, hw}), torch::randn({out, c / groups, k, k})};
      },
      [=](const std::vector<torch::Tensor>& t) { return torch::conv2d(t[0], t[1], {}, stride, pad, 1, groups); },
      2};
  layer.window = static_cast<int32_t>(k * k);
  return layer;
}

// The same convolution on a channels-last input, as ConvNeXt's depthwise convolutions run in eager PyTorch
// (the permutes around its LayerNorm and Linear layers leave every activation channels-last).
Layer ChannelsLast(Layer layer) {
  layer.name += " channels-last";
  layer.channels_last = true;
  layer.inputs = [make = std::move(layer.inputs)] {
    std::vector<torch::Tensor> t = make();
    t[0] = t[0].contiguous(at::MemoryFormat::ChannelsLast);
    return t;
  };
  return layer;
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

// A batch normalization in eval mode (a per-channel scale and shift) over 8 x `channels` maps of `size` x `size`.
// Its time follows the count of maps as well as its bytes (a short loop per map), so it is timed over a network's
// early maps (few channels, large maps) and its late ones (many channels, 7x7): on one core of this kind of host
// the second moves its bytes at half the first's rate.
Layer EvalBatchNorm(int64_t channels, int64_t size) {
  const torch::Tensor mean = torch::zeros({channels}), var = torch::ones({channels});
  return Pointwise(OpClass::kInferenceBatchNorm, absl::StrCat("batchnorm ", channels, "x", size, "x", size),
                   {8, channels, size, size}, 1, 5, [=](const std::vector<torch::Tensor>& t) {
                     return torch::batch_norm(t[0], {}, {}, mean, var, false, 0.1, 1e-5, false);
                   });
}

// A batch normalization in a training step over 8 x `channels` maps of `size` x `size`: the batch's mean and
// variance, then the scale and shift, with its affine weights; its backward computes the input's and the weights'
// gradients in one kernel.
Layer TrainingBatchNorm(int64_t channels, int64_t size) {
  Layer layer = Pointwise(OpClass::kTrainingBatchNorm, absl::StrCat("batchnorm train ", channels, "x", size, "x", size),
                          {8, channels, size, size}, 1, 8, [](const std::vector<torch::Tensor>& t) {
                            return torch::batch_norm(t[0], t[1], t[2], {}, {}, true, 0.1, 1e-5, false);
                          });
  layer.inputs = [make = std::move(layer.inputs), channels] {
    std::vector<torch::Tensor> t = make();
    t.push_back(torch::ones({channels}));
    t.push_back(torch::zeros({channels}));
    return t;
  };
  return layer;
}

Layer WithBytes(Layer layer, double bytes) {
  layer.bytes = bytes;
  return layer;
}

std::vector<Layer> Layers() {
  using T = const std::vector<torch::Tensor>&;
  std::vector<Layer> layers = {
      Linear(8, 512, 1000),
      Linear(1, 4096, 4096),  // a classifier's weights at batch 1: streamed from memory, forward and backward
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
      Conv(8, 96, 56, 96, 7, 1, 96),
      Conv(8, 672, 14, 672, 5, 1, 672),
      Conv(8, 240, 28, 240, 5, 1, 240),
      Conv(8, 960, 7, 960, 3, 1, 960),
      // ConvNeXt-T's first and third stages (a 7x7 depthwise backward over 8x96x56x56 on one thread, torch 1.13:
      // 46 ms, 11 times its forward; over 8x384x14x14 11 ms, 16 times): the class's backward is their median.
      ChannelsLast(Conv(8, 96, 56, 96, 7, 1, 96)),
      ChannelsLast(Conv(8, 384, 14, 384, 7, 1, 384)),
      // Counted as the importer counts a pool: a 3x3 window per output, inputs plus outputs.
      WithBytes(Pointwise(OpClass::kPooling, "maxpool 3x3/2 64x112x112", {8, 64, 112, 112}, 1, 9.0 / 4,
                          [](T t) { return torch::max_pool2d(t[0], 3, 2, 1); }),
                kFloat * 8.0 * 64 * (112 * 112 + 56 * 56)),
      // The importer counts inputs plus outputs: the global pool writes one value per channel.
      WithBytes(Pointwise(OpClass::kNormalization, "global average pool 512x7x7", {8, 512, 7, 7}, 1, 0,
                          [](T t) {
                            return torch::adaptive_avg_pool2d(t[0], {1, 1});
                          }),
                kFloat * (8.0 * 512 * 49 + 8 * 512)),
      EvalBatchNorm(64, 56),
      EvalBatchNorm(960, 7),
      TrainingBatchNorm(64, 56),
      TrainingBatchNorm(960, 7),
      Pointwise(OpClass::kNormalization, "layernorm 197x768", {8, 197, 768}, 1, 8,
                [](T t) { return torch::layer_norm(t[0], {768}); }),
      Pointwise(OpClass::kNormalization, "softmax 12x197x197", {8, 12, 197, 197}, 1, 5,
                [](T t) { return torch::softmax(t[0], -1); }),
      Pointwise(OpClass::kElementwise, "relu 64x56x56", {8, 64, 56, 56}, 1, 1, [](T t) { return torch::relu(t[0]); }),
      Pointwise(OpClass::kElementwise, "add 256x56x56", {8, 256, 56, 56}, 2, 1, [](T t) { return t[0] + t[1]; }),
      Pointwise(OpClass::kTranscendental, "sigmoid 32x112x112", {8, 32, 112, 112}, 1, 4,
                [](T t) { return torch::sigmoid(t[0]); }),
      Pointwise(OpClass::kTranscendental, "gelu 197x3072", {8, 197, 3072}, 1, 8, [](T t) { return torch::gelu(t[0]); }),
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

// What a backward() call costs beyond its functions (starting the autograd engine): a model's step pays it once,
// not once per layer, so each layer's backward leaves it out.
double BackwardCallSeconds(double budget) {
  const torch::Tensor leaf = torch::ones({1}).requires_grad_(true);
  return std::max(Seconds([&] { leaf.sum().backward(); }, budget) - Seconds([&] { leaf.sum(); }, budget), 0.0);
}

void Measure(const Layer& layer, double budget, double backward_call, CalibrationLine* line) {
  const std::vector<torch::Tensor> inputs = layer.inputs();
  {
    torch::NoGradGuard no_grad;
    line->forward_seconds = Seconds([&] { layer.forward(inputs); }, budget);
  }
  if (layer.backward_ops == 0) return;
  std::vector<torch::Tensor> leaves;
  for (const torch::Tensor& t : inputs) leaves.push_back(t.detach().requires_grad_(true));
  const double with_grad = Seconds([&] { layer.forward(leaves); }, budget);
  // A dense gradient of the output's shape and layout, as a network's next layer hands back: one expanded from a
  // sum's single element sends some kernels down slower paths (a batch normalization's backward: 5.5 ms, not 3.4).
  const torch::Tensor gradient = torch::randn_like(layer.forward(leaves).detach());
  const double step = Seconds([&] { layer.forward(leaves).backward(gradient); }, budget);
  line->backward_seconds = std::max(step - with_grad - backward_call, 0.0);
}

// One parameter update as eager PyTorch runs it in a training step: the gradients zeroed, the backward's
// gradient accumulated into them, then Adam's step. Large enough to stream from memory, as a model's do.
double UpdateSeconds(int64_t params, double budget) {
  torch::Tensor w = torch::randn({params}).requires_grad_(true);
  w.mutable_grad() = torch::randn({params});
  const torch::Tensor gradient = torch::randn({params});
  torch::optim::Adam adam({w});
  return Seconds(
      [&] {
        w.mutable_grad().zero_();
        w.mutable_grad().add_(gradient);
        adam.step();
      },
      budget);
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
  double backward_call = 0;
  try {
    backward_call = BackwardCallSeconds(budget);
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("calibration failed at an empty backward: ", e.what_without_backtrace()));
  }
  for (const Layer& layer : Layers()) {
    CalibrationLine line{std::string(OpClassName(layer.op_class)), layer.name, layer.flops, layer.bytes};
    line.backward_ops = layer.backward_ops;
    line.window = layer.window;
    line.channels_last = layer.channels_last;
    try {
      Measure(layer, budget, backward_call, &line);
    } catch (const c10::Error& e) {
      return absl::InternalError(absl::StrCat("calibration failed at ", layer.name, ": ", e.what_without_backtrace()));
    }
    out.lines.push_back(std::move(line));
  }
  const double adam_params = 16 << 20;
  out.lines.push_back(CalibrationLine{"optimizer", "zero_grad, accumulate, adam 16M parameters", 10 * adam_params,
                                      7 * kFloat * adam_params,
                                      UpdateSeconds(static_cast<int64_t>(adam_params), budget)});
  out.source = absl::StrCat("this host, ", options.threads, " thread(s)");
  if (absl::Status s = DeriveEfficiencies(&out); !s.ok()) return s;
  return out;
}

}  // namespace placement::learned

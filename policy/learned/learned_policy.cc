#include "policy/learned/learned_policy.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/learned/network.h"
#include "policy/learned/torch_device.h"

namespace placement::learned {
namespace {

// The format names the feature layout too (features.h): weights trained on other features are refused.
constexpr char kFormat[] = "placement-policy-1";

uint32_t HashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint32_t h = 2166136261u;
  for (std::istreambuf_iterator<char> it(in), end; it != end; ++it)
    h = (h ^ static_cast<unsigned char>(*it)) * 16777619u;
  return h;
}

}  // namespace

LearnedPolicy::LearnedPolicy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LearnedPolicy::~LearnedPolicy() = default;

std::shared_ptr<LearnedPolicy> LearnedPolicy::Create(const NetworkOptions& options, uint64_t seed) {
  torch::manual_seed(seed);
  auto impl = std::make_unique<Impl>(PolicyNet(options));
  impl->version = "untrained";
  return std::make_shared<LearnedPolicy>(std::move(impl));
}

absl::StatusOr<std::shared_ptr<const LearnedPolicy>> LearnedPolicy::Load(const std::string& path,
                                                                         const std::string& device) {
  absl::StatusOr<std::shared_ptr<LearnedPolicy>> policy = LoadForTraining(path, device);
  if (!policy.ok()) return policy.status();
  return std::shared_ptr<const LearnedPolicy>(*std::move(policy));
}

absl::StatusOr<std::shared_ptr<LearnedPolicy>> LearnedPolicy::LoadForTraining(const std::string& path,
                                                                              const std::string& device) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("policy weights '", path, "' not found"));
  }
  absl::StatusOr<TorchRuntime> runtime = SelectTorchDevice(device);
  if (!runtime.ok()) return runtime.status();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, torch::Device(runtime->device));
    c10::IValue format, version, hidden, layers;
    if (archive.try_read("meta/format", format) && format.isString() && format.toStringRef() != kFormat) {
      return absl::DataLossError(absl::StrCat("policy weights '", path, "' are in format '", format.toStringRef(),
                                              "'; this build reads '", kFormat, "' (retrain or use matching weights)"));
    }
    if (!format.isString() || !archive.try_read("meta/version", version) || !version.isString() ||
        !archive.try_read("meta/hidden", hidden) || !hidden.isInt() || !archive.try_read("meta/layers", layers) ||
        !layers.isInt()) {
      return absl::DataLossError(absl::StrCat("policy weights '", path, "' lack the ", kFormat, " header"));
    }
    NetworkOptions options{hidden.toInt(), layers.toInt()};
    if (options.hidden < 1 || options.hidden > 4096 || options.layers < 0 || options.layers > 64) {
      return absl::DataLossError(absl::StrCat("policy weights '", path, "' have an impossible shape"));
    }
    auto impl = std::make_unique<Impl>(PolicyNet(options));
    std::vector<std::vector<int64_t>> shapes;
    for (const torch::Tensor& p : impl->net->parameters()) shapes.push_back(p.sizes().vec());
    impl->net->load(archive);
    // Module::load replaces each tensor with the stored one whatever its shape; check them.
    const std::vector<torch::Tensor> loaded = impl->net->parameters();
    for (size_t i = 0; i < loaded.size(); ++i) {
      if (loaded[i].sizes().vec() != shapes[i]) {
        return absl::DataLossError(
            absl::StrCat("policy weights '", path, "' do not fit the network: parameter ", i, " has the wrong shape"));
      }
    }
    impl->device = torch::Device(runtime->device);
    impl->device_name = runtime->device;
    impl->net->to(impl->device);
    impl->net->eval();
    impl->version = absl::StrFormat("%s+%08x", version.toStringRef(), HashFile(path));
    return std::make_shared<LearnedPolicy>(std::move(impl));
  } catch (const c10::Error& e) {
    return absl::DataLossError(
        absl::StrCat("policy weights '", path, "' cannot be read: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("policy weights '", path, "' cannot be read: ", e.what()));
  }
}

absl::StatusOr<std::shared_ptr<LearnedPolicy>> LearnedPolicy::CopyForTraining(const std::string& version) const {
  try {
    // Through the archive format rather than Module::clone, which needs every submodule to be Cloneable.
    std::stringstream bytes;
    {
      torch::serialize::OutputArchive out;
      impl_->net->save(out);
      out.save_to(bytes);
    }
    auto impl = std::make_unique<Impl>(PolicyNet(impl_->net->options()));
    torch::serialize::InputArchive in;
    in.load_from(bytes, impl_->device);
    impl->net->load(in);
    impl->device = impl_->device;
    impl->device_name = impl_->device_name;
    impl->net->to(impl->device);
    impl->net->eval();
    impl->version = version;
    return std::make_shared<LearnedPolicy>(std::move(impl));
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("cannot copy the policy: ", e.what_without_backtrace()));
  }
}

absl::Status LearnedPolicy::Save(const std::string& path, const std::string& version) const {
  try {
    torch::serialize::OutputArchive archive;
    impl_->net->save(archive);
    archive.write("meta/format", c10::IValue(std::string(kFormat)));
    archive.write("meta/version", c10::IValue(version));
    archive.write("meta/hidden", c10::IValue(impl_->net->options().hidden));
    archive.write("meta/layers", c10::IValue(impl_->net->options().layers));
    const std::string partial = path + ".partial";
    {
      // Through a stream: saving to a path names the archive's root folder after the file, so the same
      // weights written under two names would differ in their bytes (and in the version hash).
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      archive.save_to(out);
      out.close();
      if (!out) return absl::InternalError(absl::StrCat("cannot write '", partial, "'"));
    }
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);  // a crash mid-write leaves the old file whole
    if (ec) return absl::InternalError(absl::StrCat("cannot write '", path, "': ", ec.message()));
    return absl::OkStatus();
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("cannot write '", path, "': ", e.what_without_backtrace()));
  }
}

const std::string& LearnedPolicy::version() const { return impl_->version; }
const std::string& LearnedPolicy::device() const { return impl_->device_name; }

absl::StatusOr<PolicyScores> LearnedPolicy::Score(const PolicyInput& input) const {
  try {
    torch::NoGradGuard no_grad;
    torch::Tensor logits =
        impl_->net->forward(ToTensors(input, impl_->device, impl_->net->options())).to(torch::kCPU).contiguous();
    torch::Tensor context = impl_->net->context_weights().to(torch::kCPU).contiguous();
    PolicyScores s;
    s.groups = input.num_groups;
    s.devices = input.num_devices;
    s.logits.assign(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
    for (int k = 0; k < kContextFeatures; ++k) s.context_weights[k] = context[k].item<float>();
    return s;
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("policy network failed: ", e.what_without_backtrace()));
  }
}

}  // namespace placement::learned

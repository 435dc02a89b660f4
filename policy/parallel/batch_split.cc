#include "policy/parallel/batch_split.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {

absl::StatusOr<BatchSplit> SplitGlobalBatch(int64_t samples, int64_t micro_batch, int32_t devices,
                                            const BatchWords& words) {
  if (samples < 1)
    return absl::InvalidArgumentError(absl::StrCat(words.batch, " ", samples, " is not a positive batch"));
  BatchSplit split;
  split.global_samples = samples;
  if (micro_batch > 0) {
    if (samples % micro_batch != 0) {
      int64_t below = micro_batch;
      while (samples % below != 0) --below;
      return absl::InvalidArgumentError(absl::StrCat(words.micro_batch, " ", micro_batch, " does not divide ",
                                                     words.batch, " ", samples, ": try ", words.micro_batch, " ",
                                                     below));
    }
    split.micro_batch = micro_batch;
  } else {
    split.micro_batch = std::max<int64_t>(1, samples / std::max(devices, 1));
    while (samples % split.micro_batch != 0) --split.micro_batch;
  }
  split.micro_batches = samples / split.micro_batch;
  return split;
}

absl::StatusOr<BatchSplit> SplitFixedBatch(int64_t samples, int64_t micro_batch, int64_t fixed,
                                           const BatchWords& words) {
  if (micro_batch > 0 && micro_batch != fixed)
    return absl::InvalidArgumentError(absl::StrCat(words.micro_batch, " ", micro_batch,
                                                   ": a run of the graph holds its batch, fixed at ", fixed,
                                                   " (an ONNX export with a dynamic batch axis can take another)"));
  if (samples % fixed != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(words.batch, " ", samples, ": a run of the graph holds its batch, fixed at ", fixed,
                     ", so a step is a whole number of runs: try ", words.batch, " ",
                     std::max<int64_t>(fixed, samples / fixed * fixed), " (or export it with a dynamic batch axis)"));
  BatchSplit split;
  split.global_samples = samples;
  split.micro_batch = fixed;
  split.micro_batches = samples / fixed;
  return split;
}

absl::StatusOr<BatchSplit> SplitStepBatch(int64_t samples, int64_t micro_batch, int32_t devices, int64_t fixed,
                                          const BatchWords& words) {
  if (samples == 0) samples = devices * std::max<int64_t>(fixed, 1);
  return fixed > 0 ? SplitFixedBatch(samples, micro_batch, fixed, words)
                   : SplitGlobalBatch(samples, micro_batch, devices, words);
}

int32_t Accelerators(const Topology& t) {
  int32_t n = 0;
  for (DeviceId d = 0; d < t.num_devices(); ++d) n += t.device(d).type == DeviceType::kAccelerator;
  return n > 0 ? n : t.num_devices();
}

std::string FixedBatchNote(const BatchSplit& split, int64_t fixed, int32_t devices, const BatchWords& words) {
  if (fixed <= 0) return "";
  std::string note = absl::StrCat("the model's batch is fixed at ", fixed, " by its export: micro-batches of ", fixed,
                                  fixed == 1 ? " sample" : " samples");
  if (split.micro_batches < devices) {
    absl::StrAppend(&note, "; ", split.micro_batches, split.micro_batches == 1 ? " micro-batch" : " micro-batches",
                    " a step, fewer than the ", devices, " devices: data parallelism needs one per replica, so ",
                    words.batch, " ", split.micro_batch * devices,
                    " (or an export with a dynamic batch axis) lets every device train");
  }
  return note;
}

}  // namespace placement

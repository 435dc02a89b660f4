#!/bin/bash
# Measures a CUDA GPU for the fidelity benchmark in one pass, at the repository root:
#   1. scripts/measure_torch_device.py  -> $OUT/measurements.json (for placectl calibrate --measurements)
#   2. bench/fidelity/gpu_steps.py      -> $OUT/results.tsv (models' measured step times)
#   3. scripts/profile_model.py         -> $OUT/profiles.tar.gz (resnet18 and mobilenet_v2, batch 32, inference
#                                          and training: model.onnx, trace.json, meta.json each)
#
#   OUT=/tmp/gpu bash bench/fidelity/gpu_run.sh 2>&1 | tee /tmp/gpu/log.txt
#
# Each part runs under its own time limit, all within GPU_RUN_SECONDS (default 400), so that one failing or slow
# part leaves the others' results; the exit status counts the parts that failed.
set -x
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_run}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.." || exit 1
deadline=$((SECONDS + ${GPU_RUN_SECONDS:-400}))
failed=0

# Seconds a part may run: its own cap, within what is left before the deadline (less 10 s for packing up).
limit() {
  local left=$((deadline - SECONDS - 10))
  ((left < $1)) && echo $((left > 1 ? left : 1)) || echo "$1"
}

nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
python3 --version
python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__,
  "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name(0))'

timeout "$(limit 90)" python3 scripts/measure_torch_device.py --device cuda --output "$OUT/measurements.json" ||
  failed=$((failed + 1))

timeout "$(limit 170)" python3 bench/fidelity/gpu_steps.py --device cuda --out "$OUT" --budget 0.5 ||
  failed=$((failed + 1))

profiles=/tmp/gpu_profiles
rm -rf "$profiles"
mkdir -p "$profiles"
for model in resnet18 mobilenet_v2; do
  for mode in inference training; do
    flag=""
    [[ $mode == training ]] && flag=--training
    if ! timeout "$(limit 60)" python3 scripts/profile_model.py "$model" --batch 32 $flag --device cuda \
      --steps 3 --warmup 2 --out "$profiles/${model}_b32_${mode}"; then
      failed=$((failed + 1))
      # The export (first) or the profiler failing for one model fails it for the others: spend no more time.
      [[ ! -s $profiles/${model}_b32_${mode}/trace.json ]] && break 2
    fi
  done
done
tar -C "$profiles" -czf "$OUT/profiles.tar.gz" .
ls -l "$OUT" "$profiles"/*
echo "gpu_run: $failed part(s) failed, $SECONDS s"
exit "$failed"

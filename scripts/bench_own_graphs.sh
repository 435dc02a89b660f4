#!/usr/bin/env bash
# The learned policy on your own graphs (docs/BENCHMARKS.md, "Learned policy on your own graphs"), in steps:
#   export    30 torchvision architectures the shipped weights never saw, to ONNX with Debian's python3-torch and
#             python3-torchvision (scripts/onnx_coverage.py: opset 14, constant folding, no weights): 20 for
#             training in BUILD/torchvision/train, 10 held out in BUILD/torchvision/held (about 7 minutes)
#   train     placectl train on the 20 as training steps (batch 32) on 4xV100 and 8xV100, 27 minutes, from the
#             shipped weights, into BUILD/tv/tv_policy.pt (+ .json, .tsv, .svg)
#   compare   the held-out ten's training steps on both clusters: the single-shot policy placer with the shipped
#             weights and with the new ones, each over AUTO without the policy (10 s), in one run
#   finetune  policy_finetune (30 s) over the single shot, and AUTO with and without policy_finetune (30 s), with
#             the shipped weights, on the corpus (tests/data/corpus, training steps on 4xV100) and the ten
#   scripts/bench_own_graphs.sh BUILD [STEP...]   (default: every step)
# Every step is CPU-heavy and long: it waits while /work/notes/QUIET (or $QUIET_FILE) exists and runs under nice.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(export train compare finetune)
QUIET_FILE="${QUIET_FILE:-/work/notes/QUIET}"
TV="$BUILD/torchvision"
OUT="$BUILD/tv"
TRAIN_MODELS=resnet18,resnet34,resnet101,resnext50_32x4d,wide_resnet50_2,densenet121,vgg11,vgg13,vgg19_bn,mobilenet_v2,mobilenet_v3_small,shufflenet_v2_x1_0,squeezenet1_0,mnasnet1_0,efficientnet_b0,regnet_x_400mf,regnet_y_400mf,googlenet,alexnet,convnext_tiny
HELD_MODELS=resnet152,resnext101_32x8d,densenet169,vgg16_bn,squeezenet1_1,mnasnet0_5,efficientnet_b1,regnet_y_800mf,shufflenet_v2_x0_5,wide_resnet101_2

wait_quiet() {
  while [ -e "$QUIET_FILE" ]; do sleep 30; done
}

export_models() {
  wait_quiet
  nice -n 10 /usr/bin/python3 "$ROOT/scripts/onnx_coverage.py" --out "$TV" --opsets 14 --fold on \
    --only "$TRAIN_MODELS,$HELD_MODELS"
  mkdir -p "$TV/train" "$TV/held"
  for m in ${TRAIN_MODELS//,/ }; do mv "$TV/${m}_op14_fold.onnx" "$TV/train/"; done
  for m in ${HELD_MODELS//,/ }; do mv "$TV/${m}_op14_fold.onnx" "$TV/held/"; done
}

train() {
  wait_quiet
  mkdir -p "$OUT"
  (cd "$ROOT" && nice -n 10 "$BUILD/client/placectl" train "$TV/train" --training --batch 32 --devices 4xV100,8xV100 \
    --time_limit 27m --out "$OUT/tv_policy.pt")
}

compare() {
  wait_quiet
  nice -n 10 "$BUILD/policy/learned/policy_compare" --graphs="$TV/held" --training --batch=32 --devices=4xV100,8xV100 \
    --weights="$ROOT/models/placement_policy.pt,$OUT/tv_policy.pt" --columns=policy@0,policy@1 --reference=auto:10s
}

finetune() {
  local columns="policy_finetune@0:30s,auto_nofinetune@0:30s,auto@0:30s"
  wait_quiet
  nice -n 10 "$BUILD/policy/learned/policy_compare" --graphs="$ROOT/tests/data/corpus" --training --batch=32 \
    --devices=4xV100 --columns="$columns" --reference=policy@0
  wait_quiet
  nice -n 10 "$BUILD/policy/learned/policy_compare" --graphs="$TV/held" --training --batch=32 --devices=4xV100,8xV100 \
    --columns="$columns" --reference=policy@0
}

for step in "${STEPS[@]}"; do
  case "$step" in
    export) export_models ;;
    train) train ;;
    compare) compare ;;
    finetune) finetune ;;
    *) echo "unknown step '$step' (export, train, compare, finetune)" >&2; exit 2 ;;
  esac
done

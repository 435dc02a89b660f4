#!/usr/bin/env bash
# The main job: score real published placements with the simulator, through placectl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
PLACECTL="$BUILD/client/placectl"
SHARED="$ROOT/../shared/bench/tarnawski"

echo "== a small pipeline shipped with the project: time per sample and step time of a two-stage split"
"$PLACECTL" simulate "$ROOT/examples/graphs/tiny_pipeline.json" --placement "$ROOT/examples/placements/tiny_pipeline_split.json" \
  --objective throughput --local
echo
"$PLACECTL" simulate "$ROOT/examples/graphs/tiny_pipeline.json" --placement "$ROOT/examples/placements/tiny_pipeline_split.json" \
  --objective step_time --local
echo

if [ -d "$SHARED" ]; then
  echo "== GNMT training (Tarnawski et al., NeurIPS 2020): the human expert's split over 6 accelerators"
  echo "   (published max-load of this split: 137.15; everything on one accelerator: 520.45)"
  "$PLACECTL" simulate "$SHARED/throughput-inputs/LayerGraphs/gnmt_training.json" \
    --placement "$SHARED/human-experts/gnmt_training_expert.json" --objective throughput --local
  echo
  echo "== the same split as one simulated training step (event simulation, upward-rank queues)"
  "$PLACECTL" simulate "$SHARED/throughput-inputs/LayerGraphs/gnmt_training.json" \
    --placement "$SHARED/human-experts/gnmt_training_expert.json" --objective step_time --priority upward_rank --local
else
  echo "(../shared/bench is not here: skipping the published inputs)"
fi

echo
echo "== what one training step of a Transformer encoder (6 layers, d_model 512) holds on one T4 at batch 64 x 512"
echo "   tokens, float32 and under bf16 autocast (docs/memory.md: weights, gradients, Adam's state, what autograd keeps)"
ENCODER="$ROOT/tests/data/corpus/transformer_encoder.onnx"
"$PLACECTL" memory "$ENCODER" --training --batch 64 --seq 512 --devices 1xT4
"$PLACECTL" memory "$ENCODER" --training --batch 64 --seq 512 --devices 1xT4 --precision amp_bf16 | tail -n +5

echo
echo "== the placement service: placement_server with its RocksDB answer cache, driven over gRPC"
"$ROOT/scripts/demo_server.sh" "$BUILD"

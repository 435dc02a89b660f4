#!/usr/bin/env bash
# The service's throughput and latency (docs/BENCHMARKS.md, "Server: cached and uncached answers"): starts
# placement_server on 127.0.0.1 (a free port, a fresh cache, no learned policy) and measures with placectl bench:
#   1. cached answers: one model, every request a repeat (after one untimed warm-up), at concurrency 1, 16, 64;
#   2. cached answers found only after decoding (other bytes of the same model: the canonical key);
#   3. uncached answers against graph size: every request new to the cache (--unique_fraction 1), one at a time,
#      for corpus models and generated graphs of 1k, 10k and 100k operators.
#   scripts/bench_server.sh BUILD [SECONDS per cached run, default 10]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
SECONDS_PER_RUN="${2:-10}"
SERVER="$BUILD/server/placement_server"
PLACECTL="$BUILD/client/placectl"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_bench.XXXXXX")"
# shellcheck source=server_lib.sh
source "$ROOT/scripts/server_lib.sh"

cleanup() {
  stop_placement_server
  rm -rf "$WORK"
}
trap cleanup EXIT

start_placement_server "$SERVER" "$WORK" --metrics_listen "" --policy_device none
for _ in $(seq 1 300); do "$PLACECTL" health --server "$ADDRESS" --timeout 2s > /dev/null 2>&1 && break; sleep 0.1; done
echo "placement_server on $ADDRESS ($(nproc) cores), $("$PLACECTL" info --server "$ADDRESS" | sed -n 's/^workers *//p')"

summary() {  # one line from placectl bench --output json
  /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
l = j["latency_ms"]
errors = ", ".join("%s: %d" % kv for kv in j["errors"].items()) or "none"
print("%-34s %7d %9.0f %9.3f %9.3f %9.3f %9.3f  hits %d, errors %s" % (sys.argv[1], j["requests"],
      j["requests_per_second"], l["p50"], l["p90"], l["p99"], l["max"], j["cache_hits"], errors))' "$1"
}
run() {  # run LABEL placectl-bench-args...: one summary line, or the error, without stopping the script
  local label="$1" out
  shift
  if out="$("$PLACECTL" bench "$@" --server "$ADDRESS" --output json 2>&1)"; then
    summary "$label" <<< "$out"
  else
    printf '%-34s failed: %s\n' "$label" "$out"
  fi
}
header() { printf '%-34s %7s %9s %9s %9s %9s %9s\n' "$1" requests "req/s" "p50 ms" "p90 ms" "p99 ms" "max ms"; }

CACHED="$ROOT/tests/data/corpus/resnet50.onnx"
echo
header "cached: resnet50.onnx, 4xA100, heft"
for c in 1 16 64; do
  run "concurrency $c" "$CACHED" --devices 4xA100 --algorithm heft --concurrency "$c" --duration "${SECONDS_PER_RUN}s"
done
run "transformer_decoder.onnx, conc. 1" "$ROOT/tests/data/corpus/transformer_decoder.onnx" --devices 4xA100 \
  --algorithm heft --duration "${SECONDS_PER_RUN}s"

# The path every cached ONNX answer took before the request key existed: the model decoded and imported, then
# the canonical graph's key hit. Each request sends other bytes of the same model (an unknown protobuf field
# appended, which the importer ignores), so the request key misses and the canonical key hits.
echo
header "cached via the canonical key (decode first)"
for model in resnet50 transformer_encoder transformer_decoder; do
  /usr/bin/python3 - "$ROOT/tests/data/corpus/$model.onnx" "$WORK/variants_$model" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
os.makedirs(sys.argv[2], exist_ok=True)
for i in range(20):  # field 1000, varint i: tag bytes 0xC0 0x3E
    open(os.path.join(sys.argv[2], f"v{i:02d}.onnx"), "wb").write(data + bytes([0xC0, 0x3E, i]))
PY
  "$PLACECTL" bench "$ROOT/tests/data/corpus/$model.onnx" --server "$ADDRESS" --devices 4xA100 --algorithm heft \
    --requests 1 > /dev/null
  run "$model.onnx, 4xA100" "$WORK/variants_$model"/v*.onnx --devices 4xA100 --algorithm heft --warmup=false \
    --requests 20
done

echo
header "uncached (one at a time), heft"
for model in vgg16 resnet50 inception_v3 transformer_encoder transformer_decoder; do
  run "$model.onnx, 4xA100" "$ROOT/tests/data/corpus/$model.onnx" --devices 4xA100 --algorithm heft \
    --unique_fraction 1 --requests 10
done
# 100k layered operators need about 420 GiB: two hosts of eight A100s.
for ops in 1000 10000 100000; do
  "$PLACECTL" generate layered --ops "$ops" --seed 1 > "$WORK/layered_$ops.json"
  requests=$(( ops >= 100000 ? 3 : 10 ))
  run "layered $ops ops (JSON), 2x8xA100" "$WORK/layered_$ops.json" --devices 2x8xA100 --algorithm heft \
    --unique_fraction 1 --requests "$requests" --deadline 60s
done

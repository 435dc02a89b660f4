#!/usr/bin/env bash
# Soak (docs/RELIABILITY.md): placement_server on 127.0.0.1 (a free port, a fresh cache) under placectl bench
# for a long run of mixed cached and uncached requests, with the server's resident memory sampled throughout.
# Passes when no request failed and resident memory grew by less than 10% from the end of the warm-up to the end.
#   scripts/soak.sh BUILD [MINUTES, default 10] [UNIQUE_FRACTION, default 0.05] [CONCURRENCY, default 8]
# Each request places one of three corpus models on 4xA100 with heft; UNIQUE_FRACTION of them carry a seed no
# earlier request used, so they miss the cache and go through import, placement, simulation and a RocksDB write.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
MINUTES="${2:-10}"
UNIQUE="${3:-0.05}"
CONCURRENCY="${4:-8}"
SERVER="$BUILD/server/placement_server"
PLACECTL="$BUILD/client/placectl"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_soak.XXXXXX")"
# shellcheck source=server_lib.sh
source "$ROOT/scripts/server_lib.sh"
SAMPLER=""
cleanup() {
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null || true
  stop_placement_server
  rm -rf "$WORK"
}
trap cleanup EXIT

start_placement_server "$SERVER" "$WORK" --metrics_listen "" --policy_device none
for _ in $(seq 1 300); do "$PLACECTL" health --server "$ADDRESS" --timeout 2s > /dev/null 2>&1 && break; sleep 0.1; done
echo "placement_server on $ADDRESS, pid $PID, $(nproc) cores; ${MINUTES} min, unique fraction $UNIQUE, concurrency $CONCURRENCY"

# Resident memory (VmRSS, KiB) every 5 s: seconds since start, KiB.
(
  start=$(date +%s)
  while kill -0 "$PID" 2>/dev/null; do
    echo "$(( $(date +%s) - start )) $(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status")"
    sleep 5
  done
) > "$WORK/rss.tsv" &
SAMPLER=$!

CORPUS="$ROOT/tests/data/corpus"
"$PLACECTL" bench "$CORPUS/resnet50.onnx" "$CORPUS/vgg16.onnx" "$CORPUS/mobilenet_v3_large.onnx" \
  --server "$ADDRESS" --devices 4xA100 --algorithm heft --concurrency "$CONCURRENCY" \
  --duration "${MINUTES}m" --unique_fraction "$UNIQUE" --output json > "$WORK/bench.json"
kill "$SAMPLER" 2>/dev/null || true
SAMPLER=""

/usr/bin/python3 - "$WORK/bench.json" "$WORK/rss.tsv" "$WORK/data" <<'PY'
import json, os, sys
bench = json.load(open(sys.argv[1]))
samples = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
lat = bench["latency_ms"]
errors = sum(bench["errors"].values())
warm = next((kb for t, kb in samples if t >= 60), samples[0][1])  # after the first minute
end = samples[-1][1]
peak = max(kb for _, kb in samples)
growth = 100.0 * (end - warm) / warm
data_mb = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[3]) for f in fs) / 2**20
print("requests        %d (%.0f/s), cache hits %d, errors %d %s" % (bench["requests"], bench["requests_per_second"],
      bench["cache_hits"], errors, bench["errors"] or ""))
print("latency ms      p50 %.3f  p90 %.3f  p99 %.3f  max %.3f" % (lat["p50"], lat["p90"], lat["p99"], lat["max"]))
print("resident MiB    after 1 min %.1f, end %.1f, peak %.1f: growth %+.1f%%" % (warm / 1024, end / 1024, peak / 1024, growth))
print("cache on disk   %.1f MiB" % data_mb)
print("rss samples     " + " ".join("%d:%.0f" % (t, kb / 1024) for t, kb in samples[::12]))
ok = errors == 0 and growth < 10.0
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY

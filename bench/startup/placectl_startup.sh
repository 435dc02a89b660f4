#!/usr/bin/env bash
# placectl's start-up, as a scheduler shelling out to it pays it: hyperfine runs `presets`, `health` against a
# running server, and a `submit` the server answers from its cache, each many times, and placectl-torch's
# `presets` (the same program with LibTorch, which placectl was before it handed LibTorch commands over) as the
# reference measured in the same run.
#   bench/startup/placectl_startup.sh BUILD
set -euo pipefail
BUILD="${1:?usage: $0 BUILD}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placectl_startup.XXXXXX")"
"$BUILD/server/placement_server" --listen=127.0.0.1:0 --metrics_listen= --data_dir="$WORK/data" \
  --policy_device=none > "$WORK/server.out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 300); do grep -q "^listening on" "$WORK/server.out" && break; sleep 0.1; done
address="$(sed -n 's/^listening on //p' "$WORK/server.out")"
placectl="$BUILD/client/placectl"
graph="$ROOT/tests/data/corpus/resnet50.onnx"
until "$placectl" health --server "$address" >/dev/null 2>&1; do sleep 0.1; done
submit="$placectl submit $graph --server $address --devices 4xA100 --algorithm heft --output json"
$submit > /dev/null  # computed once: every timed submit below is a cache hit
hyperfine -N --warmup 5 --runs 50 --export-markdown "$WORK/startup.md" \
  -n "placectl presets" "$placectl presets" \
  -n "placectl health" "$placectl health --server $address" \
  -n "placectl submit (cached)" "$submit" \
  -n "placectl-torch presets (reference)" "$BUILD/client/placectl-torch presets" >&2
cat "$WORK/startup.md"

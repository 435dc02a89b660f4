#!/usr/bin/env bash
# The service end to end: start placement_server on 127.0.0.1 (a free port) with a fresh RocksDB data
# directory, place a model through gRPC with `placectl submit`, send the same request again to show the answer
# cache, then stop the server with SIGTERM (it drains and exits 0). The server is killed on any exit path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
SERVER="$BUILD/server/placement_server"
PLACECTL="$BUILD/client/placectl"
GRAPH="$ROOT/tests/data/corpus/transformer_encoder.onnx"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_demo.XXXXXX")"
# shellcheck source=server_lib.sh
source "$ROOT/scripts/server_lib.sh"

cleanup() {
  stop_placement_server
  rm -rf "$WORK"
}
trap cleanup EXIT

start_placement_server "$SERVER" "$WORK" --metrics_listen 127.0.0.1:0 --grace_period 10s
echo "placement_server listening on $ADDRESS, cache in $WORK/data"

for _ in $(seq 1 300); do  # readiness: the placers and the policy's device are loaded
  if timeout 5 "$PLACECTL" health --server "$ADDRESS" --timeout 2s > /dev/null 2>&1; then break; fi
  sleep 0.1
done
timeout 10 "$PLACECTL" health --server "$ADDRESS"

echo
echo "-- placectl submit: a Transformer encoder (ONNX), one training step, on two hosts of four V100s, 2 s budget"
timeout 60 "$PLACECTL" submit "$GRAPH" --server "$ADDRESS" --devices 2x4xV100 --training --deadline 2s
echo
echo "-- the same request again: answered from the RocksDB cache"
timeout 60 "$PLACECTL" submit "$GRAPH" --server "$ADDRESS" --devices 2x4xV100 --training --deadline 2s \
  | grep -E '^(algorithm|value|cache|answer)'

echo
kill -TERM "$PID"
status=0
wait "$PID" || status=$?
PID=""
echo "placement_server stopped on SIGTERM (exit status $status); its log:"
sed 's/^/  /' "$WORK/server.log"
exit "$status"

#!/usr/bin/env bash
# Weights swapped under load (docs/BENCHMARKS.md, "Learned policy on your own graphs"): placement_server with the
# learned policy on 127.0.0.1 (a free port, a fresh cache, an admin token), its weights in WORK/serving.pt, and
# placectl bench at concurrency 16 on four small graphs with --algorithm policy for SECONDS (default 40). Every
# answer is cached after its first, so the load is mostly cheap cached answers; each swap changes the cache keys,
# so the first request of each graph after it is computed again on the new weights. Meanwhile ten swaps, evenly
# spread, alternating two weights files (the shipped ones and weights placectl train makes here in seconds), each
# copied over serving.pt and then read through the admin RPC (placectl reload, odd swaps) or SIGHUP (even ones);
# the sixth instead sends a corrupt file's bytes (placectl reload --weights), which must be refused with the old
# weights kept serving.
# Prints the bench report (requests/s, errors by code, answers by policy version, answers mixing versions) and the
# server's own count of swaps.
#   scripts/bench_policy_swap.sh BUILD [SECONDS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
SECONDS_OF_LOAD="${2:-40}"
SERVER="$BUILD/server/placement_server"
PLACECTL="$BUILD/client/placectl"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_swap.XXXXXX")"
# shellcheck source=server_lib.sh
source "$ROOT/scripts/server_lib.sh"

cleanup() {
  stop_placement_server
  rm -rf "$WORK"
}
trap cleanup EXIT

mkdir -p "$WORK/graphs"
for ops in 40 80 120 160; do "$PLACECTL" generate layered --ops "$ops" --seed "$ops" > "$WORK/graphs/layered_$ops.json"; done
A="$ROOT/models/placement_policy.pt"
B="$WORK/tuned.pt"
"$PLACECTL" train "$WORK/graphs" --devices 4xV100 --iterations 20 --time_limit 0 --out "$B" > /dev/null 2>&1
printf 'x%.0s' $(seq 1 4096) > "$WORK/corrupt.pt"
cp "$A" "$WORK/serving.pt"
umask 077
echo "swap-bench-token" > "$WORK/token"
export PLACEMENT_AUTH_TOKEN="swap-bench-token"

start_placement_server "$SERVER" "$WORK" --metrics_listen "" --policy_device cpu --policy_weights "$WORK/serving.pt" \
  --admin_token_file "$WORK/token"
for _ in $(seq 1 300); do "$PLACECTL" health --server "$ADDRESS" --timeout 2s > /dev/null 2>&1 && break; sleep 0.1; done
echo "placement_server on $ADDRESS ($(nproc) cores), $("$PLACECTL" info --server "$ADDRESS" | sed -n 's/^workers *//p')"

swaps() {  # ten swaps spread over the load, after a tenth of it
  local gap
  gap="$(awk -v s="$SECONDS_OF_LOAD" 'BEGIN { printf "%.2f", s / 12 }')"
  local n=0
  sleep "$gap"
  for i in $(seq 1 10); do
    sleep "$gap"
    if [ "$i" -eq 6 ]; then
      if "$PLACECTL" reload --server "$ADDRESS" --weights "$WORK/corrupt.pt" > "$WORK/reload_$i.log" 2>&1; then
        echo "swap $i: the corrupt file was accepted" >&2
      else
        echo "swap $i (rpc, a corrupt file sent): refused, exit $? ($(tail -n 1 "$WORK/reload_$i.log" | cut -c1-110)...)"
      fi
      continue
    fi
    n=$((n + 1))
    local file="$A"
    [ $((n % 2)) -eq 1 ] && file="$B"
    cp "$file" "$WORK/serving.pt.new" && mv "$WORK/serving.pt.new" "$WORK/serving.pt"
    if [ $((i % 2)) -eq 1 ]; then
      "$PLACECTL" reload --server "$ADDRESS" > "$WORK/reload_$i.log" 2>&1
      echo "swap $i (rpc, $(basename "$file")): $(sed -n 's/^policies *//p' "$WORK/reload_$i.log")"
    else
      kill -HUP "$PID"
      echo "swap $i (SIGHUP, $(basename "$file"))"
    fi
  done
}

swaps > "$WORK/swaps.log" &
SWAPS=$!
"$PLACECTL" bench "$WORK"/graphs/*.json --server "$ADDRESS" --devices 4xV100 --algorithm policy --concurrency 16 \
  --duration "${SECONDS_OF_LOAD}s"
wait "$SWAPS"
cat "$WORK/swaps.log"
sleep 0.5
echo "server log: $(grep -c 'policy reloaded' "$WORK/server.log") swaps, $(grep -c 'policy reload refused' "$WORK/server.log") refused"
"$PLACECTL" info --server "$ADDRESS" | grep -E '^(policy|policies) '

#!/usr/bin/env bash
# Runs the benchmarks whose figures docs/BENCHMARKS.md reports, pinned to one core.
#   scripts/bench.sh BUILD [NAME] [google-benchmark flags...]   NAME: simulator_bench, onnx_import_bench, ...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
if [ $# -gt 0 ] && [ -x "$BUILD/bench/$1" ]; then
  name="$1"
  shift
  exec $PIN "$BUILD/bench/$name" "$@"
fi
for bench in "$BUILD"/bench/*_bench; do
  echo "== $(basename "$bench")"
  $PIN "$bench" "$@"
done

#!/usr/bin/env bash
# Runs the benchmarks whose figures docs/BENCHMARKS.md reports, pinned to one core.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
$PIN "$BUILD/bench/simulator_bench" "$@"

#!/usr/bin/env bash
# Runs the benchmarks whose figures docs/BENCHMARKS.md reports, pinned to one core.
#   scripts/bench.sh BUILD [NAME] [google-benchmark flags...]   NAME: simulator_bench, onnx_import_bench, ...
#   scripts/bench.sh BUILD server [SECONDS]   the service under load (scripts/bench_server.sh; not pinned: the
#                                             server and the load generator share the machine's cores)
#   scripts/bench.sh BUILD policy-swap [SECONDS]   weights swapped under load (scripts/bench_policy_swap.sh)
#   scripts/bench.sh BUILD own-graphs [STEP...]    the learned policy trained on torchvision models
#                                                   (scripts/bench_own_graphs.sh; about an hour and a half)
#   scripts/bench.sh BUILD fidelity [FLAGS]   predicted against measured step times (bench/fidelity/fidelity.py;
#                                             needs python3-torch and python3-torchvision; not pinned: it
#                                             measures one and two threads)
#   scripts/bench.sh BUILD pipeline [FLAGS]   two-stage pipelines run on the two cores against the prediction
#                                             (bench/pipeline/pipeline_fidelity.py)
#   scripts/bench.sh BUILD startup            placectl's start-up per command (bench/startup/placectl_startup.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
# placement_client from the source tree, with its stubs generated there (ignored by git) as a build would: the
# fidelity benchmarks run models through placement_client.torch.
in_place_client() {
  (cd "$ROOT/client/python" && /usr/bin/python3 -c 'import setup; setup.generate_stubs(".")')
}
if [ "${1:-}" = server ]; then
  shift
  exec "$ROOT/scripts/bench_server.sh" "$BUILD" "$@"
fi
if [ "${1:-}" = policy-swap ]; then
  shift
  exec "$ROOT/scripts/bench_policy_swap.sh" "$BUILD" "$@"
fi
if [ "${1:-}" = own-graphs ]; then
  shift
  exec "$ROOT/scripts/bench_own_graphs.sh" "$BUILD" "$@"
fi
if [ "${1:-}" = fidelity ]; then
  shift
  if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
    echo "bench fidelity: needs Debian's python3-torch and python3-torchvision" >&2
    exit 1
  fi
  in_place_client
  exec env PYTHONPATH="$ROOT/client/python" /usr/bin/python3 "$ROOT/bench/fidelity/fidelity.py" \
    --placectl "$BUILD/client/placectl" "$@"
fi
if [ "${1:-}" = pipeline ]; then
  shift
  in_place_client
  exec env PYTHONPATH="$ROOT/client/python" /usr/bin/python3 "$ROOT/bench/pipeline/pipeline_fidelity.py" \
    --placectl "$BUILD/client/placectl" "$@"
fi
if [ "${1:-}" = startup ]; then
  exec "$ROOT/bench/startup/placectl_startup.sh" "$BUILD"
fi
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

#!/usr/bin/env bash
# The runtime images' files run by themselves: deploy/docker/runtime-root.sh's folder for each image (the
# programs and only the libraries they load) is used as a root (chroot), as the image's layer on top of
# debian:bookworm-slim would be, and the programs start there: placectl answers, placement_server serves and turns
# ready, and the classic server refuses the learned policy by name. No Docker engine needed.
#   runtime_image_test.sh SERVER SERVER_CLASSIC PLACECTL PLACECTL_TORCH
# Exit 0: passed, 1: failed, 77: skipped (not root: chroot needs it).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 SERVER SERVER_CLASSIC PLACECTL PLACECTL_TORCH" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: chroot needs root"; exit 77; fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_runtime_image.XXXXXX")"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A root like the image's: merged /usr (as debian:bookworm-slim has it) and a /tmp.
make_root() {
  local root="$1"
  shift
  "$HERE/../docker/runtime-root.sh" "$root" "$@"
  ln -s usr/lib "$root/lib"
  ln -s usr/lib64 "$root/lib64"
  mkdir -p "$root/tmp"
}

# Starts placement_server in the root and checks it turns ready, asked by the placectl of the same root.
serve_and_check() {
  local root="$1" server="$2"
  shift 2
  chroot "$root" "/usr/local/bin/$server" --listen=127.0.0.1:0 --metrics_listen= --data_dir=/tmp/data "$@" \
    > "$root/tmp/server.out" 2>&1 &
  server_pid=$!
  local address=""
  for _ in $(seq 1 300); do
    address="$(sed -n 's/^listening on //p' "$root/tmp/server.out")"
    [ -n "$address" ] && break
    kill -0 "$server_pid" 2>/dev/null || fail "$server exited: $(cat "$root/tmp/server.out")"
    sleep 0.1
  done
  [ -n "$address" ] || fail "$server did not listen within 30 s"
  for _ in $(seq 1 300); do
    chroot "$root" /usr/local/bin/placectl health --server "$address" >/dev/null 2>&1 && break
    sleep 0.1
  done
  chroot "$root" /usr/local/bin/placectl health --server "$address" ||
    fail "$server in $root did not turn ready (running: $(kill -0 "$server_pid" 2>/dev/null && echo yes || echo no));" \
      "its output: $(cat "$root/tmp/server.out")"
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}

make_root "$WORK/default" "$1" "$3" "$4"
chroot "$WORK/default" /usr/local/bin/placectl presets >/dev/null || fail "placectl does not run in the default root"
chroot "$WORK/default" /usr/local/bin/placectl-torch presets >/dev/null || fail "placectl-torch does not run"
serve_and_check "$WORK/default" "$(basename "$1")" --policy_device=none
echo "default image: placement_server, placectl and placectl-torch run on their own libraries"

make_root "$WORK/classic" "$2" "$3"
if ldd "$2" | grep -q libtorch; then fail "the classic server links LibTorch"; fi
serve_and_check "$WORK/classic" "$(basename "$2")"
if chroot "$WORK/classic" "/usr/local/bin/$(basename "$2")" --listen=127.0.0.1:0 --metrics_listen= \
     --data_dir=/tmp/data2 --policy_device=cpu > "$WORK/refused.out" 2>&1; then
  fail "the classic server started with --policy_device=cpu"
fi
grep -q "built without the learned policy" "$WORK/refused.out" || fail "unclear refusal: $(cat "$WORK/refused.out")"
echo "classic image: $(du -sm "$WORK/classic" | cut -f1) MB against $(du -sm "$WORK/default" | cut -f1) MB; serves without LibTorch"

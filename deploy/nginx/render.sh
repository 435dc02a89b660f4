#!/usr/bin/env bash
# Writes a runnable balancer configuration into DIR: nginx.conf as is, balancer.conf from the template with
# its placeholders filled, and the temp folders. Run it with: nginx -p DIR/ -c DIR/nginx.conf -e stderr
#   render.sh DIR LISTEN HOST:PORT...      e.g. render.sh /tmp/nginx 8080 placement-1:50051 placement-2:50051
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 DIR LISTEN HOST:PORT..." >&2
  exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
listen="$2"
shift 2

upstreams=""
for replica in "$@"; do
  # One failure takes a replica out of the ring for 10 s; its graphs go to the next replica meanwhile.
  upstreams+="server ${replica} max_fails=1 fail_timeout=10s;"$'\n    '
done
template="$(cat "$HERE/balancer.conf.template")"
template="${template//'${PLACEMENT_LISTEN}'/$listen}"
template="${template//'${PLACEMENT_UPSTREAMS}'/${upstreams%$'\n    '}}"

mkdir -p "$dir/tmp"
cp "$HERE/nginx.conf" "$dir/nginx.conf"
printf '%s\n' "$template" > "$dir/balancer.conf"

#!/usr/bin/env bash
# The balancer's entry point: renders the configuration, runs nginx, and every PLACEMENT_RESOLVE_SECONDS (5)
# resolves the replicas' names again, reloading nginx when an address changed (a replica recreated at a new
# address, or gone from DNS and back). A reload is graceful: calls in flight finish on the old workers.
#   balancer.sh DIR LISTEN HOST:PORT...
# SIGTERM or SIGINT stops nginx gracefully (SIGQUIT: it finishes the calls in flight) and then exits.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 DIR LISTEN HOST:PORT..." >&2
  exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
listen="$2"
shift 2
nginx="${PLACEMENT_NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
interval="${PLACEMENT_RESOLVE_SECONDS:-5}"

"$HERE/render.sh" "$dir" "$listen" "$@"
"$nginx" -p "$dir/" -c "$dir/nginx.conf" -e stderr -g 'daemon off;' &
nginx_pid=$!
trap 'kill -QUIT "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" || true; exit 0' TERM INT
echo "balancer: nginx $nginx_pid on $listen; resolving $* every ${interval}s" >&2

while kill -0 "$nginx_pid" 2>/dev/null; do
  sleep "$interval" &
  wait $! || true
  "$HERE/render.sh" "$dir/next" "$listen" "$@" || continue
  if ! cmp -s "$dir/next/balancer.conf" "$dir/balancer.conf"; then
    mv "$dir/next/balancer.conf" "$dir/balancer.conf"
    echo "balancer: replica addresses changed, reloading: $(awk '/max_fails/ { printf "%s ", $2 }' "$dir/balancer.conf")" >&2
    "$nginx" -p "$dir/" -c "$dir/nginx.conf" -e stderr -s reload || echo "balancer: reload failed" >&2
  fi
done
wait "$nginx_pid"

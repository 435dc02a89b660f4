#!/usr/bin/env bash
# Writes a runnable balancer configuration into DIR: nginx.conf as is, balancer.conf from the template with the
# replicas' names resolved now, and the temp folders. Run it with: nginx -p DIR/ -c DIR/nginx.conf -e stderr
#   render.sh DIR LISTEN HOST:PORT...      e.g. render.sh /tmp/nginx 8080 placement-1:50051 placement-2:50051
# Names resolve through the system (getent: /etc/hosts, Docker's DNS), or through PLACEMENT_HOSTS_FILE (lines
# "ADDRESS NAME", for tests). A replica whose name does not resolve gives its share to the next one that does.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 DIR LISTEN HOST:PORT..." >&2
  exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$1"
listen="$2"
shift 2
replicas=("$@")
count=${#replicas[@]}

# The IPv4 address of a name now, or nothing.
resolve() {
  local host="$1"
  if [[ "$host" =~ ^[0-9]+(\.[0-9]+){3}$ ]]; then echo "$host"; return; fi
  if [ -n "${PLACEMENT_HOSTS_FILE:-}" ]; then
    awk -v name="$host" '$1 !~ /^#/ && $2 == name { print $1; exit }' "$PLACEMENT_HOSTS_FILE"
  else
    getent ahostsv4 "$host" 2>/dev/null | awk '{ print $1; exit }' || true
  fi
}

addresses=()
for replica in "${replicas[@]}"; do
  ip="$(resolve "${replica%:*}")"
  addresses+=("${ip:+$ip:${replica##*:}}")
done

# The i-th resolved address at or after replica i (wrapping), or nothing when none resolves.
resolved_from() {
  local start="$1" skip="$2" k i
  for ((k = 0; k < count; k++)); do
    i=$(((start + k) % count))
    if [ -n "${addresses[$i]}" ]; then
      if [ "$skip" -eq 0 ]; then echo "${addresses[$i]}"; return; fi
      skip=$((skip - 1))
    fi
  done
}

split=""
groups=""
for ((i = 0; i < count; i++)); do
  if [ "$i" -lt $((count - 1)) ]; then
    share="$(awk -v n="$count" 'BEGIN { printf "%.2f%%", int(10000 / n) / 100 }')"
  else
    share="*"
  fi
  split+="${share} placement_${i};"$'\n    '
  primary="$(resolved_from "$i" 0)"
  backup="$(resolved_from "$i" 1)"
  # Nothing resolves: a closed port, so calls fail UNAVAILABLE (clients retry) until a replica is back.
  group="upstream placement_${i} {"$'\n'"    # ${replicas[$i]}"$'\n'
  group+="    server ${primary:-127.0.0.1:9} max_fails=1 fail_timeout=10s;"$'\n'
  if [ -n "$backup" ] && [ "$backup" != "$primary" ]; then group+="    server ${backup} backup;"$'\n'; fi
  group+="    keepalive 16;"$'\n'"}"$'\n'
  groups+="$group"
done
template="$(cat "$HERE/balancer.conf.template")"
template="${template//'${PLACEMENT_LISTEN}'/$listen}"
template="${template//'${PLACEMENT_SPLIT}'/${split%$'\n    '}}"
template="${template//'${PLACEMENT_GROUPS}'/${groups%$'\n'}}"

mkdir -p "$dir/tmp"
cp "$HERE/nginx.conf" "$dir/nginx.conf"
# Written whole, then renamed: a reload never reads half a file.
printf '%s\n' "$template" > "$dir/balancer.conf.new"
mv "$dir/balancer.conf.new" "$dir/balancer.conf"

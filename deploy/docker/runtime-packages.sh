#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries the given binaries load, one a line: the runtime
# image installs exactly these (the build stage runs this on what it built, so the list follows the link line).
#   runtime-packages.sh BINARY...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
for binary in "$@"; do
  [ -x "$binary" ] || { echo "runtime-packages: $binary is not an executable" >&2; exit 1; }
  if ldd "$binary" | grep -q "not found"; then
    echo "runtime-packages: $binary has unresolved libraries:" >&2
    ldd "$binary" | grep "not found" >&2
    exit 1
  fi
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | while read -r library; do
  real="$(readlink -f "$library")"
  # Packages register /lib/... or /usr/lib/... (merged /usr); ask for the path as loaded, then as resolved.
  for candidate in "$library" "$real" "${real#/usr}"; do
    if owner="$(dpkg-query -S "$candidate" 2>/dev/null)"; then
      echo "${owner%%:*}"
      continue 2
    fi
  done
  echo "runtime-packages: no package holds $library ($real)" >&2
  exit 1
done | sort -u

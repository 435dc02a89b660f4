#!/usr/bin/env bash
# Prints the Debian packages that hold the shared libraries the given binaries load, one a line: the runtime
# image installs exactly these (the build stage runs this on what it built, so the list follows the link line).
#   runtime-packages.sh BINARY...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 BINARY..." >&2; exit 2; }
libraries=()
for binary in "$@"; do
  [ -x "$binary" ] || { echo "runtime-packages: $binary is not an executable" >&2; exit 1; }
  if ldd "$binary" | grep -q "not found"; then
    echo "runtime-packages: $binary has unresolved libraries:" >&2
    ldd "$binary" | grep "not found" >&2
    exit 1
  fi
  mapfile -t -O "${#libraries[@]}" libraries < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
done
mapfile -t libraries < <(printf '%s\n' "${libraries[@]}" | sort -u)

# Packages register /lib/... or /usr/lib/... (merged /usr), and the real file rather than the soname link: ask
# for each library as loaded, as resolved, and resolved without /usr, all in one dpkg-query call.
candidates=()
for library in "${libraries[@]}"; do
  real="$(readlink -f "$library")"
  candidates+=("$library" "$real" "${real#/usr}")
done
declare -A owner_of
while IFS= read -r line; do
  owner_of["${line#*: }"]="${line%%: *}"
done < <(dpkg-query -S "${candidates[@]}" 2>/dev/null || true)

for library in "${libraries[@]}"; do
  real="$(readlink -f "$library")"
  package=""
  for candidate in "$library" "$real" "${real#/usr}"; do
    if [ -n "${owner_of[$candidate]:-}" ]; then package="${owner_of[$candidate]}"; break; fi
  done
  if [ -z "$package" ]; then
    echo "runtime-packages: no package holds $library ($real)" >&2
    exit 1
  fi
  echo "${package%%:*}"
done | sort -u

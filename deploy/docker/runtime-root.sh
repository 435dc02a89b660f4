#!/usr/bin/env bash
# Builds the runtime image's files in DEST: the given binaries in DEST/usr/local/bin and exactly the shared
# libraries they load (ldd's closure, links resolved, each under the real folder the loader finds it in), and
# nothing else a package would bring (documentation, data, other libraries, programs). Prints the count and size.
#   runtime-root.sh DEST BINARY...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DEST BINARY..." >&2; exit 2; }
dest="$1"
shift
mkdir -p "$dest/usr/local/bin"
libraries=()
for binary in "$@"; do
  [ -x "$binary" ] || { echo "runtime-root: $binary is not an executable" >&2; exit 1; }
  if ldd "$binary" | grep -q "not found"; then
    echo "runtime-root: $binary has unresolved libraries:" >&2
    ldd "$binary" | grep "not found" >&2
    exit 1
  fi
  # "libx.so.1 => /usr/lib/.../libx.so.1 (0x...)" and the loader's own "/lib64/ld-linux-x86-64.so.2 (0x...)".
  mapfile -t -O "${#libraries[@]}" libraries < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
  cp "$binary" "$dest/usr/local/bin/"
done
count=0
for library in $(printf '%s\n' "${libraries[@]}" | sort -u); do
  # Under the real folder (merged /usr: /lib is /usr/lib) and the name the loader asks for (the soname link),
  # as a file: a soname link to an alternatives link to the library becomes the library.
  folder="$(realpath "$(dirname "$library")")"
  mkdir -p "$dest$folder"
  if [ ! -e "$dest$folder/$(basename "$library")" ]; then
    cp -L "$library" "$dest$folder/$(basename "$library")"
    count=$((count + 1))
  fi
done
echo "runtime-root: $# programs, $count libraries, $(du -sm "$dest" | cut -f1) MB in $dest"

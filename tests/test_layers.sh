#!/usr/bin/env bash
# The runtime's data flows one way (docs/architecture.md, "What may call
# what"): from the calls of the compiled objects (nm), no file of runtime/
# may reach itself again through the files it calls (tsort finds the loops),
# and no layer may call one above it: formats/ (the number formats and
# low-bit weight layouts, pure functions) calls no other layer; vk/ calls
# neither plan/, record/ nor the objects of runtime/; plan/ calls neither
# record/ nor those objects; record/ does not call them.
# Usage: test_layers.sh OBJECT... (the og_objects target's objects; those
# of runtime/ are checked)
set -euo pipefail
defs=$(mktemp) edges=$(mktemp)
trap 'rm -f "$defs" "$edges" "$defs.err"' EXIT
declare -A name=()
for o in "$@"; do
  case $o in */runtime/*.c.o) name[$o]=${o##*/runtime/} name[$o]=${name[$o]%.c.o} ;; esac
done
[ "${#name[@]}" -gt 0 ] || { echo "test_layers: no runtime objects given" >&2; exit 1; }
for o in "${!name[@]}"; do
  nm --defined-only -g "$o" | awk -v f="${name[$o]}" '$2 ~ /^[TDBRC]$/ { print $3, f }'
done | sort -u > "$defs"
for o in "${!name[@]}"; do
  f=${name[$o]}
  nm -u "$o" | awk '{ print $2 }' | sort -u |
    join -o 2.2 - "$defs" | grep -vx "$f" | sed "s#^#$f #" || true
done | sort -u > "$edges"
[ -s "$edges" ] || { echo "test_layers: no calls between runtime files found" >&2; exit 1; }

layer() { case $1 in formats/*) echo 0 ;; vk/*) echo 1 ;; plan/*) echo 2 ;; record/*) echo 3 ;; *) echo 4 ;; esac; }
failed=0
while read -r from to; do
  if [ "$(layer "$from")" -lt "$(layer "$to")" ]; then
    echo "test_layers: runtime/$from calls up into runtime/$to" >&2
    failed=1
  fi
done < "$edges"
if ! tsort "$edges" > /dev/null 2> "$defs.err"; then
  echo "test_layers: runtime files in a circle:" >&2
  cat "$defs.err" >&2
  failed=1
fi
echo "test_layers: $(wc -l < "$edges") calls between ${#name[@]} runtime files checked"
[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"

#!/usr/bin/env bash
# The runtime's data flows one way (docs/architecture.md, "What may call
# what"): from the calls of the compiled objects (nm), no file of runtime/
# may reach itself again through the files it calls (tsort finds the loops),
# and no layer may call one above it: formats/ (the number formats and
# low-bit weight layouts, pure functions) calls no other layer; vk/ calls
# neither plan/, record/ nor the objects of runtime/; plan/ calls neither
# record/ nor those objects; record/ does not call them. And the tuner
# sees the runtime through its narrow interface only: no source of tuner/
# includes a header of runtime/ but onegpu.h, onegpu_formats.h and
# og_tuning.h (grep; og_internal.h and the layers' headers are the
# runtime's own).
# Usage: test_layers.sh OBJECT... (the og_objects target's objects; those
# of runtime/ are checked)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
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
private=$(find "$src/runtime" -name '*.h' -printf '%f\n' |
  grep -vxE 'onegpu\.h|onegpu_formats\.h|og_tuning\.h' | sed 's/\./\\./' | paste -sd'|')
[ -n "$private" ] || { echo "test_layers: no private headers of runtime/ found" >&2; exit 1; }
if grep -rnE "#[[:space:]]*include[[:space:]]*[<\"]([^>\"]*/)?($private)[>\"]" "$src/tuner" \
  --include='*.[ch]' >&2; then
  echo "test_layers: tuner/ includes a private header of runtime/ (above): og_tuning.h is" \
    "the tuner's interface to the runtime" >&2
  failed=1
fi
echo "test_layers: $(wc -l < "$edges") calls between ${#name[@]} runtime files checked"
[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"

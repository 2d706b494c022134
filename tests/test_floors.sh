#!/usr/bin/env bash
# The ground floor and the tuner's folders (docs/architecture.md, "Folders"),
# from the calls of the compiled objects (nm), as test_layers.sh does for
# runtime/: no file of gen/ or db/ calls a function of runtime/ or tuner/;
# no file of tuner/ reaches itself again through the files it calls, nor a
# folder of tuner/ itself through the folders it calls (tsort finds the
# loops); of tuner/'s files only ogtune.c defines main; and no source of gen/
# or db/ includes onegpu.h or another header of runtime/ (grep), and the
# types they share with it (gen/og_types.h) are onegpu.h's text.
# Usage: test_floors.sh SOURCE_DIR OBJECT... (the objects of og_objects,
# og_tuner and ogtune)
set -euo pipefail
src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A name=()
for o in "$@"; do
  f=${o#*.dir/} f=${f%.c.o}
  case $f in gen/* | db/* | runtime/* | tuner/*) name[$o]=$f ;; esac
done
[ "${#name[@]}" -gt 0 ] || { echo "test_floors: no objects given" >&2; exit 1; }
for o in "${!name[@]}"; do
  nm --defined-only -g "$o" | awk -v f="${name[$o]}" '$2 ~ /^[TDBRC]$/ { print $3, f }'
done | sort -u > "$tmp/defs"
for o in "${!name[@]}"; do
  f=${name[$o]}
  nm -u "$o" | awk '{ print $2 }' | sort -u |
    join -o 2.2 - "$tmp/defs" | grep -vx "$f" | sed "s#^#$f #" || true
done | sort -u > "$tmp/edges"

failed=0
fail() { echo "test_floors: $*" >&2; failed=1; }
grep -q '^tuner/' "$tmp/edges" || fail "no calls between tuner files found"
while read -r from to; do
  case $from:$to in
    gen/*:runtime/* | gen/*:tuner/* | db/*:runtime/* | db/*:tuner/*) fail "$from calls up into $to" ;;
  esac
done < "$tmp/edges"
grep '^tuner/[^ ]* tuner/' "$tmp/edges" > "$tmp/tuner" || true
if ! tsort "$tmp/tuner" > /dev/null 2> "$tmp/err"; then
  fail "tuner files in a circle:"
  cat "$tmp/err" >&2
fi
awk '{ a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b); if (a != b) print a, b }' \
  "$tmp/tuner" | sort -u > "$tmp/folders"
if ! tsort "$tmp/folders" > /dev/null 2> "$tmp/err"; then
  fail "tuner folders in a circle:"
  cat "$tmp/err" >&2
fi
mains=$(awk '$1 == "main" && $2 ~ /^tuner\// { print $2 }' "$tmp/defs")
[ "$mains" = tuner/ogtune ] || fail "main defined in tuner by: ${mains:-none} (only tuner/ogtune.c)"
headers=$(find "$src/runtime" -name '*.h' -printf '%f\n' | sed 's/\./\\./' | paste -sd'|')
if grep -nE "#[[:space:]]*include[[:space:]]*[<\"]($headers)[>\"]" \
  "$src"/gen/*.[ch] "$src"/db/*.[ch] >&2; then
  fail "gen/ or db/ includes a header of runtime/ (above)"
fi
block() { sed -n '/^#ifndef OG_TYPES_H$/,/^#endif \/\* OG_TYPES_H \*\/$/p' "$1"; }
block "$src/gen/og_types.h" > "$tmp/types"
[ -s "$tmp/types" ] || fail "gen/og_types.h has no OG_TYPES_H block"
block "$src/runtime/onegpu.h" | diff -u "$tmp/types" - >&2 ||
  fail "gen/og_types.h and runtime/onegpu.h differ in the OG_TYPES_H block (above)"
echo "test_floors: $(wc -l < "$tmp/edges") calls between ${#name[@]} files checked"
[ "$failed" -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit "$failed"

#!/usr/bin/env bash
# A kernel family is one entry (gen/og_family.h): outside its entry
# (gen/families/) no source of the library, the tuner or the drop-in BLAS
# compares a variant (p->variant == OG_VARIANT_TILE and the like); it asks
# the entry what the family can do instead. Tests may compare: they check
# which family was chosen.
# Usage: test_families.sh SOURCE_DIR
set -euo pipefail
cd "$1"
pattern='(variant|OG_VARIANT_[A-Z0-9_]+)[[:space:]]*[!=]=|[!=]=[[:space:]]*(\(og_variant\)[[:space:]]*)?OG_VARIANT_'
found=$(grep -rnE "$pattern" --include='*.c' --include='*.h' gen runtime tuner db blas fuzz examples |
  grep -v '^gen/families/' || true)
if [ -n "$found" ]; then
  echo "test_families: variant comparisons outside gen/families/ (ask og_family_can or the entry):" >&2
  echo "$found" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
entries=$(ls gen/families/og_family_*.c | wc -l)
[ "$entries" -gt 0 ] || { echo "test_families: no entries in gen/families/" >&2; exit 1; }
echo "test_families: no variant comparisons outside the $entries entry files of gen/families/"
echo "1 passed, 0 failed"

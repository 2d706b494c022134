#!/usr/bin/env bash
# Records a whole tuning space for tests/test_search.c: every candidate of
# the standard Int8Gemm space at 1x768x768 (the skinny kernel's rows, columns,
# k slices and dot products: 96 candidates on lavapipe, the default first),
# measured on the local device into DB (resumable: run it again and what DB
# holds is kept), then written in the space's order as "params<TAB>GOP/s"
# lines (0 for rejected candidates) to tests/data/space-<device>-int8-1x768x768.tsv.
# Usage: bench/record_space.sh [DB (a temporary file)]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
db=${1:-$(mktemp -d)/space.db}
device=$(build/ogtune devices --json | sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 |
         tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//')
out=tests/data/space-$device-int8-1x768x768.tsv
build/ogtune tune --op int8gemm --preset standard --shapes 1x768x768 --strategy exhaustive \
    --db "$db" > /dev/null
{
  echo "# ogtune tune --op int8gemm --preset standard --shapes 1x768x768 (every candidate)"
  echo "# $device, commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
  # One record per line, in the order measured (show lists the oldest first).
  build/ogtune show --db "$db" --json | sed 's/},{/}\n{/g' |
    sed -n 's/.*"params":"\([^"]*\)".*"gflops":\([0-9.]*\).*"accepted":\([a-z]*\).*/\1\t\2\t\3/p' |
    awk -F'\t' '{ printf "%s\t%s\n", $1, ($3 == "true" ? $2 : 0) }'
} > "$out"
echo "$(grep -vc '^#' "$out") candidates in $out (database $db)"

#!/usr/bin/env bash
# Records a tuning space for tests/test_search.c: a random sample of the
# standard float32 space at 256x256x256 (the default first), measured on the
# local device into DB (resumable: run it again, or stop it and run it again
# with fewer candidates, and what DB holds is kept), then written in the
# order measured as "params<TAB>GFLOP/s" lines (0 for rejected candidates) to
# tests/data/space-<device>-f32-256.tsv. lavapipe compiles a kernel in about
# 15 s on two cores, so a few hundred candidates take an hour or more.
# Usage: bench/record_space.sh [CANDIDATES (400)] [DB (a temporary file)]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
count=${1:-400}
db=${2:-$(mktemp -d)/space.db}
device=$(build/ogtune devices --json | sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 |
         tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//')
out=tests/data/space-$device-f32-256.tsv
build/ogtune tune --preset standard --dtype f32 --shapes 256x256x256 --strategy random \
    --budget "${count}c" --db "$db" > /dev/null
{
  echo "# ogtune tune --preset standard --shapes 256x256x256 --strategy random --budget ${count}c"
  echo "# $device, commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
  # One record per line, in the order measured (show lists the oldest first).
  build/ogtune show --db "$db" --json | sed 's/},{/}\n{/g' |
    sed -n 's/.*"params":"\([^"]*\)".*"gflops":\([0-9.]*\).*"accepted":\([a-z]*\).*/\1\t\2\t\3/p' |
    awk -F'\t' '{ printf "%s\t%s\n", $1, ($3 == "true" ? $2 : 0) }'
} > "$out"
echo "$(grep -vc '^#' "$out") candidates in $out (database $db)"

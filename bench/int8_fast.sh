#!/usr/bin/env bash
# Int8Gemm before and after the branch-free kernels (direct-load tile, word
# loads in the skinny kernel), in one run: the same ogtune binary runs the
# templates of BASE (through OG_TEMPLATE_DIR) with the kernels the quick
# preset picked there on lavapipe (bench/logs/2026-11-30-int8-vs-float-llvmpipe.txt:
# the 128x64 tile with 8x4 registers and packed dot products, the skinny
# kernel with one row, 64 columns, 8 slices and packed dot products), and the
# current templates with what the quick preset picks now (tuned into a fresh
# database first), alternating, two rounds, with the load average before
# each. Prints GOP/s and the GB/s of B (N x K bytes a call), the new / old
# ratio of each shape, and keeps the log in bench/logs/.
# Usage: bench/int8_fast.sh [BASE]  (default: the parent of the commit that
# added the direct-load tile)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(git log -n1 --format=%H --grep '^Int8Gemm: direct-load tile')^}
scripts/build.sh
old=$(mktemp -d)
db=$old/tuning.db
trap 'rm -rf "$old"' EXIT
for t in int8gemm_tile int8gemm_skinny int8_common; do
  git show "$base:templates/$t.tmpl" > "$old/$t.tmpl"
done
skinny_shapes=${SKINNY_SHAPES:-1x768x768,1x3072x768}
tile_shapes=${TILE_SHAPES:-512x512x512,1024x1024x1024}
old_skinny="variant=int8skinny,rows=1,cols=64,slices=8,dot=1"
old_tile="variant=int8tile,bm=128,bn=64,bk=16,tm=8,tn=4,wgx=16,wgy=16,pad=0,dot=1"
log=bench/logs/$(date +%Y-%m-%d)-int8-fast-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
export OG_TUNING_DB=
{
  echo "# onegpu: Int8Gemm with (old, $(git rev-parse --short "$base")) and without (new) branches in its k loops, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# load average before tuning: $(cut -d' ' -f1-3 /proc/loadavg)"
  time_start=$(date +%s)
  build/ogtune tune --op int8gemm --preset quick --shapes "$skinny_shapes,$tile_shapes" --db "$db" >/dev/null
  echo "# new kernels tuned (quick preset) in $(( $(date +%s) - time_start )) s"
  for round in 1 2; do
    for which in old new; do
      echo
      echo "## round $round, $which, load average $(cut -d' ' -f1-3 /proc/loadavg)"
      if [ "$which" = old ]; then
        OG_TEMPLATE_DIR=$old build/ogtune bench --op int8gemm --shapes "$skinny_shapes" --params "$old_skinny"
        OG_TEMPLATE_DIR=$old build/ogtune bench --op int8gemm --shapes "$tile_shapes" --params "$old_tile" | tail -n +3
      else
        build/ogtune bench --op int8gemm --shapes "$skinny_shapes,$tile_shapes" --db "$db"
      fi
    done
  done
  echo
  echo "## load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
# Mean GOP/s and GB/s of B per shape over the rounds, new / old.
awk '/^## round/ { which = $4; sub(/,$/, "", which) }
     /^[0-9]+x[0-9]+x[0-9]+x[0-9]+ / { key = $1; g[which, key] += $2; b[which, key] += $4; n[which, key]++
               if (!(key in seen)) { seen[key] = 1; order[++count] = key } }
     END { print "\n## new / old, mean of the rounds (GOP/s; GB/s of B)"
           for (i = 1; i <= count; i++) { k = order[i]
             go = g["old", k] / n["old", k]; gn = g["new", k] / n["new", k]
             printf "%-22s %7.2f / %6.2f GOP/s  %6.2f / %5.2f GB/s  = %.2fx\n", k, gn, go,
               b["new", k] / n["new", k], b["old", k] / n["old", k], gn / go } }' \
  "$log" | tee -a "$log"
echo "log: $log"

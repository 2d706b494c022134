#!/usr/bin/env bash
# The float tile with and without a branch in its k loop, in one run: the
# same ogtune binary runs the template of the commit before the branch-free
# k loop (through OG_TEMPLATE_DIR) and the current one, alternating, on the
# kernel the tuner picks on lavapipe (128x64 tile, 16x8 registers, direct
# vector texel loads) in both summation orders, at 256, 512 and 1024 cubed
# and the design's 128x768x768 in float32 (DTYPES: also f16, bf16), with the
# load average. Prints the log, the new / old ratio of each, and keeps the log
# in bench/logs/.
# Usage: bench/branch_free_tile.sh [BASE]  (default: the parent of the
# commit that made the k loop branch-free)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-}
. bench/old_templates.sh "Tile: no branch in the k loop" branch-free-tile
shapes=${SHAPES:-256x256x256,512x512x512,1024x1024x1024,128x768x768}
dtypes=${DTYPES:-f32}
tile="bm=128,bn=64,bk=16,tm=16,tn=8,wgx=8,wgy=8,pad=0,load=direct,vec=4,src=texel,split=1"
export OG_TUNING_DB=
{
  echo "# onegpu: the float tile with (old, $(git rev-parse --short "$base")) and without (new) a branch in its k loop, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for round in 1 2; do
    for acc in chain blocked; do
      for which in old new; do
        echo
        echo "## round $round, acc=$acc, $which template, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        if [ "$which" = old ]; then dir=$old_templates; else dir=; fi
        OG_TEMPLATE_DIR=$dir build/ogtune bench --shapes "$shapes" --params "$tile,acc=$acc" \
          --dtype "$dtypes"
      done
    done
  done
} 2>&1 | tee "$log"
# Mean GFLOP/s of the given kernel per (acc, shape), new / old.
awk '/^## round/ { acc = $4; sub(/,$/, "", acc); which = $5 }
     /^(f32|f16|bf16) / { key = acc " " $1 " " $2; g[which, key] += $5; n[which, key]++
               if (!(key in seen)) { seen[key] = 1; order[++count] = key } }
     END { print "\n## new / old, mean of the rounds"
           for (i = 1; i <= count; i++) { k = order[i]
             printf "%-30s %.2f / %.2f GFLOP/s = %.2fx\n", k, g["new", k] / n["new", k],
               g["old", k] / n["old", k], (g["new", k] / n["new", k]) / (g["old", k] / n["old", k]) } }' \
  "$log" | tee -a "$log"
echo "log: $log"

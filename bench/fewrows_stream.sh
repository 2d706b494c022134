#!/usr/bin/env bash
# Few rows (M = 1, float32) before and after the branch-free loops, in one
# run: the same ogtune binary runs the template of the commit before them
# (through OG_TEMPLATE_DIR) and the current one, alternating, at the decoder
# shapes 1x3072x768 and 1x768x3072 with B stored K x N and N x K: the old
# kernel with the rule's columns and slices, the new one with the same
# (vec=1 and vec=4) and with the shape that streams fastest on lavapipe
# (64 or 128 columns of 4 slices). Prints GB/s
# of B read (4 N K bytes a call), the new / old ratio and the load average,
# and keeps the log in bench/logs/.
# Usage: bench/fewrows_stream.sh [BASE]  (default: the parent of the commit
# that made the few-rows loops branch-free)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-}
. bench/old_templates.sh "Few rows: no branch in the k loop" fewrows-stream
shapes=${SHAPES:-1x3072x768,1x768x3072}
export OG_TUNING_DB=
{
  echo "# onegpu: few rows, M = 1, float32, old ($(git rev-parse --short "$base")) and new template, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for round in 1 2 3; do
    for layout in kn nk; do
      if [ $layout = kn ]; then flag=; rule=cols=16,slices=16; wide=cols=64,slices=4
      else flag=--trans-b; rule=cols=8,slices=32; wide=cols=128,slices=4; fi
      for run in "old $rule,vec=1" "new $rule,vec=1" "new $rule,vec=4" "new $wide,vec=4"; do
        set -- $run
        echo
        echo "## round $round, B $layout, $1 template, $2, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        if [ "$1" = old ]; then dir=$old_templates; else dir=; fi
        OG_TEMPLATE_DIR=$dir build/ogtune bench --shapes "$shapes" --params "variant=fewrows,$2" $flag
      done
    done
  done
} 2>&1 | tee "$log"
# Mean GB/s of B per (layout, kernel, shape) and the ratio to the old kernel.
awk '/^## round/ { layout = $5; which = $6 " " $8; sub(/,$/, "", which) }
     /^f32 / { split($2, d, "x"); key = layout " " $2; k = key " " which
               gbs[k] += 2 * $5 / d[1]; n[k]++
               if (!(k in seen)) { seen[k] = 1; order[++count] = k }
               if (which ~ /^old/) base[key] = k }
     END { print "\n## GB/s of B read, mean of the rounds (ratio to the old template)"
           for (i = 1; i <= count; i++) { k = order[i]; split(k, f, " ")
             b = base[f[1] " " f[2]]
             printf "%-55s %6.2f GB/s  %.2fx\n", k, gbs[k] / n[k], (gbs[k] / n[k]) / (gbs[b] / n[b]) } }' \
  "$log" | tee -a "$log"
echo "log: $log"

#!/usr/bin/env bash
# The memory path does not change what the kernels read: ogtune bench at
# 1024 cubed (and the design's BERT projection) with the operands mapped
# (lavapipe's default) and with every upload and download forced through
# staging copies (OG_STAGING=1), alternated three times in one run, with the
# load average. Both measure device-local buffers; only og_buffer_write and
# og_buffer_read differ, so the GFLOP/s should agree within noise. Prints
# the log and keeps it in bench/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
shapes=${1:-1024x1024x1024,128x768x768}
log=bench/logs/$(date +%Y-%m-%d)-staging-vs-direct-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
export OG_TUNING_DB=
{
  echo "# onegpu: staged against mapped uploads, float32, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  build/ogtune devices
  for round in 1 2 3; do
    for staging in 0 1; do
      echo
      echo "## round $round, OG_STAGING=$staging, load average $(cut -d' ' -f1-3 /proc/loadavg)"
      OG_STAGING=$staging build/ogtune bench --shapes "$shapes"
    done
  done
} 2>&1 | tee "$log"
# The ratio of each shape's mean GFLOP/s (both columns) staged / mapped.
awk '/^## round/ { staged = ($4 == "OG_STAGING=1,") }
     /^f32 / { key = $2; tile[staged, key] += $3; sel[staged, key] += $5; n[staged, key]++;
               if (!(key in seen)) { seen[key] = 1; order[++count] = key } }
     END { print "\n## staged / mapped, mean of the rounds"
           for (i = 1; i <= count; i++) { k = order[i]
             printf "%-22s 64x64 tile %.2f / %.2f GF/s = %.3fx, selected %.2f / %.2f GF/s = %.3fx\n", k,
               tile[1, k] / n[1, k], tile[0, k] / n[0, k], (tile[1, k] / n[1, k]) / (tile[0, k] / n[0, k]),
               sel[1, k] / n[1, k], sel[0, k] / n[0, k], (sel[1, k] / n[1, k]) / (sel[0, k] / n[0, k]) } }' \
  "$log" | tee -a "$log"
echo "log: $log"

#!/usr/bin/env bash
# Tunes GEMM (float32; DTYPES: also f16, bf16) at 256, 512 and 1024 cubed and
# the design's 128x768x768 (SHAPES: others) on the default device into a
# fresh database, then measures the default and the selected kernel side by
# side in one run (ogtune bench), with the load average before and after.
# Prints the log and keeps it in bench/logs/.
# Usage: bench/tuned_vs_default.sh [extra ogtune tune options]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
shapes=${SHAPES:-256x256x256,512x512x512,1024x1024x1024,128x768x768}
dtypes=${DTYPES:-f32}
db=$(mktemp -d)/tuning.db
log=bench/logs/$(date +%Y-%m-%d)-tuned-vs-default-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: tuned against default, $dtypes, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  build/ogtune devices
  echo
  time_start=$(date +%s)
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  build/ogtune tune --preset quick --shapes "$shapes" --dtype "$dtypes" --db "$db" "$@"
  echo "tuning took $(( $(date +%s) - time_start )) s"
  echo
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  build/ogtune bench --shapes "$shapes" --dtype "$dtypes" --db "$db"
  echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
echo "log: $log"

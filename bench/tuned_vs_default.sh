#!/usr/bin/env bash
# Tunes float32 GEMM at 256, 512 and 1024 cubed on the default device into a
# fresh database, then measures the default and the selected kernel side by
# side in one run (ogtune bench). Prints the log and keeps it in bench/logs/.
# Usage: bench/tuned_vs_default.sh [extra ogtune tune options]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
shapes=256x256x256,512x512x512,1024x1024x1024
db=$(mktemp -d)/tuning.db
log=bench/logs/$(date +%Y-%m-%d)-tuned-vs-default-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: tuned against default, float32, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  build/ogtune devices
  echo
  time_start=$(date +%s)
  build/ogtune tune --preset quick --shapes "$shapes" --db "$db" "$@"
  echo "tuning took $(( $(date +%s) - time_start )) s"
  echo
  build/ogtune bench --shapes "$shapes" --db "$db"
} 2>&1 | tee "$log"
echo "log: $log"

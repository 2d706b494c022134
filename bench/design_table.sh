#!/usr/bin/env bash
# The reference design's table ("Small grids and few rows"): for each of its
# float32 shapes, the 64x64 tile alone against the kernels the runtime selects
# without a tuning database (split-k by the rule, the few-rows kernel),
# measured side by side in one run (ogtune bench). Prints the log and keeps it
# in bench/logs/. Usage: bench/design_table.sh [extra ogtune bench options]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
db=$(mktemp -d)/none.db
log=bench/logs/$(date +%Y-%m-%d)-design-table-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: the reference design's table shapes, float32, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  build/ogtune devices
  echo
  build/ogtune bench --db "$db" "$@"
} 2>&1 | tee "$log"
echo "log: $log"

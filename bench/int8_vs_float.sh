#!/usr/bin/env bash
# Int8Gemm against the float32 GEMM on the reference design's decoder steps
# (M = 1: 768x768, 768 -> 3072, 3072 -> 768, the 51865 x 768 vocabulary) and
# 512 and 1024 cubed: both tuned with the quick preset into a fresh database,
# then measured side by side in one run (ogtune bench --op int8gemm: GOP/s
# next to GFLOP/s). Prints the log and keeps it in bench/logs/.
# Usage: bench/int8_vs_float.sh [extra ogtune tune options]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
shapes=1x768x768,1x3072x768,1x768x3072,1x51865x768,512x512x512,1024x1024x1024
# The float32 GEMM cannot bind the vocabulary's B (159 MB) on lavapipe's
# 128 MiB maxStorageBufferRange: it is tuned on the others.
float_shapes=1x768x768,1x3072x768,1x768x3072,512x512x512,1024x1024x1024
db=$(mktemp -d)/tuning.db
log=bench/logs/$(date +%Y-%m-%d)-int8-vs-float-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: Int8Gemm against float32 GEMM, both tuned (quick preset), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  build/ogtune devices
  echo
  time_start=$(date +%s)
  build/ogtune tune --op int8gemm --preset quick --shapes "$shapes" --db "$db" "$@"
  build/ogtune tune --preset quick --shapes "$float_shapes" --db "$db" "$@"
  echo "tuning took $(( $(date +%s) - time_start )) s"
  echo
  build/ogtune bench --op int8gemm --shapes "$shapes" --db "$db"
} 2>&1 | tee "$log"
echo "log: $log"

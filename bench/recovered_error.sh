#!/usr/bin/env bash
# The error table of float32 recovered from float16 products
# (docs/recovered-float32.md): native float32, plain float16, recovered
# without and with row/column scaling, on uniform inputs, inputs offset to
# 2^-20 and 2^20, and rows/columns spread over 2^-60..2^60, at K = 256 to
# 4096 (ogtune accuracy). Prints the log and keeps it in bench/logs/.
# Usage: bench/recovered_error.sh [ogtune accuracy options]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
log=bench/logs/$(date +%Y-%m-%d)-recovered-error-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: float32 recovered from float16 products, error table, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  # No tuning database: the float32 column is the default kernel's.
  OG_TUNING_DB= build/ogtune accuracy --db "" "$@"
} 2>&1 | tee "$log"
echo "log: $log"

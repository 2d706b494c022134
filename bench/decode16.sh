#!/usr/bin/env bash
# The 16-bit decode kernel (variant=decode) against the 64x64 tile that
# float16 and bfloat16 products of at most 16 rows ran before it: one run of
# ogtune bench (the tile and the selected kernel side by side, no database)
# at a language model's decode shapes (Llama-3-8B's FFN down projection, M =
# 1 and 8), B stored N x K (as models ship) and K x N, with the load average
# before and after. Prints the log and keeps it in bench/logs/.
# Usage: bench/decode16.sh (SHAPES, DTYPES override)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
shapes=${SHAPES:-1x4096x14336,8x4096x14336}
dtypes=${DTYPES:-f16,bf16}
log=bench/logs/$(date +%Y-%m-%d)-decode16-${dtypes//,/-}-$(build/ogtune devices --json |
      sed -n 's/.*"name":"\([^"(]*\).*/\1/p' | head -n1 | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//').txt
{
  echo "# onegpu: the 16-bit decode kernel against the 64x64 tile, $dtypes, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for layout in --trans-b ""; do
    echo
    if [ -n "$layout" ]; then echo "## B N x K"; else echo "## B K x N"; fi
    echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
    OG_TUNING_DB='' OG_PRETUNED_DIR=/nonexistent \
      build/ogtune bench --shapes "$shapes" --dtype "$dtypes" $layout
    echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
  done
} 2>&1 | tee "$log"
echo "log: $log"

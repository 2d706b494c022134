#!/usr/bin/env bash
# Low-bit weight products (og_qgemm_*) on the local device: for each weight
# format, `ogtune bench --op qgemm` at a decoder's shapes, which prints the
# kernel's GB/s of weight bytes beside vkCmdCopyBuffer of the same bytes
# and the float16 GEMM of the same shape, all timed in alternation in one
# run, with the load average; the log goes to bench/logs/.
# Usage: bench/qgemm.sh  (SHAPES=MxNxK,... and FORMATS="mxfp4 q8_0 ..." override;
# the float16 GEMM at M = 1 is the 64x64 tile, seconds a call on lavapipe)
set -euo pipefail
cd "$(dirname "$0")/.."
shapes=${SHAPES:-1x4096x4096,1x14336x4096,8x4096x4096}
formats=${FORMATS:-mxfp4 nvfp4 int4:g128:uint4 q8_0}
log=bench/logs/$(date -u +%Y-%m-%d)-qgemm-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt
# The built-in choice: no shipped records (the build tree's own pretuned
# databases included).
export OG_TUNING_DB='' OG_PRETUNED_DIR=/nonexistent
{
  echo "# onegpu: low-bit weight products, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for f in $formats; do
    echo
    echo "\$ ogtune bench --op qgemm --weights $f --shapes $shapes"
    build/ogtune bench --op qgemm --weights "$f" --shapes "$shapes"
  done
} 2>&1 | tee "$log"
echo "bench/qgemm.sh: wrote $log"

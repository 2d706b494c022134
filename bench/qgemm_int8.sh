#!/usr/bin/env bash
# The low-bit decode kernel's integer path (dot=1: int8 activations and
# 4x8-bit dot products; docs/decode.md, "The integer path") against its
# float path, in one run: for each weight format and M, the shipped
# database's choice (the tuned float path) as --against and the same kernel
# with dot=DOT as --params, timed in alternation by `ogtune bench --op
# qgemm` with the copy of the same bytes and the load average; the log
# goes to bench/logs/.
# Usage: bench/qgemm_int8.sh  (SHAPES="1x4096x14336 ...", FORMATS="q8_0 ...",
# DOT=2 for the packed emulation override)
set -euo pipefail
cd "$(dirname "$0")/.."
shapes=${SHAPES:-1x4096x14336 8x4096x14336}
formats=${FORMATS:-int4:g32 q8_0 q4_k q6_k mxfp4 nvfp4}
dot=${DOT:-1}
log=bench/logs/$(date -u +%Y-%m-%d)-qgemm-int8-path-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt
{
  echo "# onegpu: the low-bit decode kernel's integer path (dot=$dot) against its float path, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# def/sel: the float path's time over the integer path's (above 1: the integer path is faster)"
  for f in $formats; do
    for s in $shapes; do
      float=$(build/ogtune select --op qgemm --weights "$f" --shape "$s" --json |
        grep -o '"params":"[^"]*' | sed 's/"params":"//')
      echo
      echo "\$ ogtune bench --op qgemm --weights $f --shapes $s --against $float --params $float,dot=$dot"
      build/ogtune bench --op qgemm --weights "$f" --shapes "$s" --against "$float" --params "$float,dot=$dot"
    done
  done
} 2>&1 | tee "$log"
echo "bench/qgemm_int8.sh: wrote $log"

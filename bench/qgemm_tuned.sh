#!/usr/bin/env bash
# Low-bit weight products (og_qgemm_*): what tuning and the prefill tile
# give on the local device, each as ratios measured in one run with the
# load average (ogtune bench --op qgemm times its kernels in alternation):
#  1. for each format, ogtune tune --op qgemm (quick preset) at the decode
#     shapes into a fresh database, then bench: the default decode kernel
#     against the tuned one (column def/sel);
#  2. the prefill (M above 16): the portable tile with the weights decoded
#     as loaded (the default) against the decode kernel over tiles of 16
#     rows that M above 16 ran before (given with --params);
# the log goes to bench/logs/.
# Usage: bench/qgemm_tuned.sh  (SHAPES, PREFILL and FORMATS override)
set -euo pipefail
cd "$(dirname "$0")/.."
shapes=${SHAPES:-1x4096x4096,8x4096x4096}
prefill=${PREFILL:-64x4096x4096,256x4096x4096}
formats=${FORMATS:-mxfp4 int4:g128:uint4}
decode=variant=qdecode,rows=16,cols=4,slices=32,vec=4
db=$(mktemp -d)/qgemm.db
trap 'rm -rf "$(dirname "$db")"' EXIT
log=bench/logs/$(date -u +%Y-%m-%d)-qgemm-tuned-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt
export OG_TUNING_DB=
{
  echo "# onegpu: low-bit weight products tuned, and the prefill, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for f in $formats; do
    echo
    echo "\$ ogtune tune --op qgemm --weights $f --shapes $shapes --db DB"
    build/ogtune tune --op qgemm --weights "$f" --shapes "$shapes" --db "$db" | grep -v '^  \['
    echo "\$ ogtune bench --op qgemm --weights $f --shapes $shapes --db DB"
    build/ogtune bench --op qgemm --weights "$f" --shapes "$shapes" --db "$db"
  done
  for f in $formats; do
    echo
    echo "\$ ogtune bench --op qgemm --weights $f --shapes $prefill --params $decode"
    build/ogtune bench --op qgemm --weights "$f" --shapes "$prefill" --params "$decode"
  done
} 2>&1 | tee "$log"
echo "bench/qgemm_tuned.sh: wrote $log"

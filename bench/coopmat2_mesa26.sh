#!/usr/bin/env bash
# The coopmat2 kernel (VK_NV_cooperative_matrix2's flexible dimensions: one
# matrix a subgroup) on Mesa 26's lavapipe, in one run with the load average
# around each part: against the KHR matrix tile Fast mode selects there and
# against the portable 64x64 tile (printed beside each by ogtune bench), at
# 1024 cubed and 512x4096x4096, float16. Every kernel is verified against
# the float64 reference before it is timed. Lavapipe runs the matrix
# products as plain loops: the figures compare the kernels' feeding, not a
# matrix engine. Prints the log and keeps it in bench/logs/.
# Usage: bench/coopmat2_mesa26.sh (SHAPES overrides the shapes)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
scripts/mesa26.sh setup >/dev/null
shapes=${SHAPES:-1024x1024x1024,512x4096x4096}
log=bench/logs/$(date +%Y-%m-%d)-coopmat2-mesa26.txt
export OG_TUNING_DB='' OG_PRETUNED_DIR=/nonexistent
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
matrix=$(scripts/mesa26.sh run build/ogtune select --dtype f16 --shape 1024x1024x1024 --json |
  grep -o '"params":"[^"]*"' | head -n 1 | cut -d'"' -f4)
sub=$(echo "$matrix" | sed -n 's/.*sub=\([0-9]*\).*/\1/p')
bench() { scripts/mesa26.sh run build/ogtune bench --dtype f16 --shapes "$shapes" --params "$1"; }
{
  echo "# onegpu: coopmat2 against the KHR matrix tile and the 64x64 tile on Mesa 26, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  scripts/mesa26.sh run build/ogtune devices | head -n 4
  load
  echo "## the KHR matrix tile (Fast mode's default here)"
  tile_out=$(bench "$matrix")
  echo "$tile_out"
  load
  for p in "variant=coopmat2,bm=64,bn=64,bk=16,sgx=2,sgy=2,pad=8,sub=$sub" \
    "variant=coopmat2,bm=64,bn=64,bk=16,sgx=4,sgy=2,pad=8,sub=$sub" \
    "variant=coopmat2,bm=64,bn=64,bk=32,sgx=2,sgy=2,pad=8,sub=$sub,buf=1"; do
    echo "## $p"
    out=$(bench "$p")
    echo "$out"
    paste <(echo "$out" | awk '$1 == "f16" { print $2, $5 }') \
      <(echo "$tile_out" | awk '$1 == "f16" { print $5 }') |
      awk '{ printf "f16 %s  coopmat2 %.2f GF/s  matrix tile %.2f GF/s  coopmat2/matrix tile %.2fx\n", $1, $2, $3, $2 / $3 }'
    load
  done
} 2>&1 | tee "$log"
echo "log: $log"

#!/usr/bin/env bash
# Issue 26's benchmark, in one run with the load average around each part:
#  1. on Mesa 26's lavapipe (scripts/mesa26.sh), the float16 matrix kernel
#     Fast mode selects (KHR, the device's 8x8x8 fragments) against the
#     portable 64x64 tile, and Int8Gemm's selected kernel against its
#     portable tile, at 256, 512 and 1024 cubed (lavapipe runs the 8x8x8
#     products in plain code: the figure is printed, not a goal);
#  2. the portable kernel tuned on Mesa 22 (db/pretuned/llvmpipe.sql's
#     record for float32 at 256 cubed) on Mesa 22 and on Mesa 26.
# Every kernel is verified against the float64 reference before it is timed
# (ogtune bench). Prints the log and keeps it in bench/logs/.
# Usage: bench/mesa26_matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/mesa26.sh setup
shapes=${SHAPES:-256x256x256,512x512x512,1024x1024x1024}
log=bench/logs/$(date +%Y-%m-%d)-mesa26-matrix-llvmpipe.txt
# The built-in defaults: no user or shipped records (the build tree's own
# pretuned databases included).
export OG_TUNING_DB='' OG_PRETUNED_DIR=/nonexistent
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
{
  echo "# onegpu: matrix kernels on Mesa 26 against the portable tile, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  scripts/mesa26.sh run build/ogtune devices | head -n 4
  load
  echo "## float16: selected (the KHR matrix kernel) against the 64x64 tile, Mesa 26"
  scripts/mesa26.sh run build/ogtune bench --dtype f16 --shapes "$shapes"
  load
  # Int8Gemm: ogtune bench times one kernel against the float32 GEMM, so the
  # matrix kernel (the default here) and the portable tile are timed in turn
  # and their GOP/s compared.
  portable=$(build/ogtune select --op int8gemm --shape 256x256x256 --json |
    grep -o '"params":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  echo "## Int8Gemm: the KHR matrix kernel (selected) and the portable tile ($portable), Mesa 26"
  matrix_out=$(scripts/mesa26.sh run build/ogtune bench --op int8gemm --shapes "$shapes")
  portable_out=$(scripts/mesa26.sh run build/ogtune bench --op int8gemm --shapes "$shapes" \
    --params "$portable")
  echo "$matrix_out"
  echo "$portable_out"
  paste <(echo "$matrix_out" | awk '$3 == "GOP/s" { print $1, $2 }') \
    <(echo "$portable_out" | awk '$3 == "GOP/s" { print $2 }') |
    awk '{ printf "int8 %s  matrix %.2f GOP/s  portable %.2f GOP/s  matrix/portable %.2fx\n", $1, $2, $3, $2 / $3 }'
  load
  tuned=$(build/ogtune select --dtype f32 --shape 256x256x256 --db build/pretuned/llvmpipe.db \
    --json | grep -o '"params":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  echo "## the float32 kernel tuned on Mesa 22 ($tuned) against the 64x64 tile"
  echo "### Mesa 22.3.6"
  build/ogtune bench --dtype f32 --shapes 256x256x256,1024x1024x1024 --params "$tuned"
  load
  echo "### Mesa 26"
  scripts/mesa26.sh run build/ogtune bench --dtype f32 --shapes 256x256x256,1024x1024x1024 \
    --params "$tuned"
  load
} 2>&1 | tee "$log"
echo "log: $log"

#!/usr/bin/env bash
# Issue 27's convolution on cooperative matrices, in one run with the load
# average: on Mesa 26's lavapipe (scripts/mesa26.sh), float16 in Fast mode
# with no tuning records, `ogtune bench --op conv` times the portable tile
# (column "default") and the KHR matrix tile Fast mode selects (8x8x8
# fragments; column "selected") in alternation, then the GEMM of the same
# M, N, K and batch (its own default: the KHR matrix tile), at ogtune's
# model shapes (ResNet's 3x3 and 7x7/2, Whisper's first layer, a depthwise
# 3x3). lavapipe runs the 8x8x8 products in plain code: the figures are
# printed, not goals. Every kernel is verified before it is timed. Prints
# the log and keeps it in bench/logs/.
# Usage: bench/conv_matrix_mesa26.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
scripts/mesa26.sh setup
log=bench/logs/$(date +%Y-%m-%d)-conv-matrix-mesa26.txt
export OG_TUNING_DB= # the built-in defaults: no user or shipped records
{
  echo "# onegpu: the convolution on the KHR matrix tile, Mesa 26, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# commit $(git rev-parse --short HEAD); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  scripts/mesa26.sh run build/ogtune bench --op conv --dtype f16 --db /nonexistent/none.db
} 2>&1 | tee "$log"
echo "log: $log"

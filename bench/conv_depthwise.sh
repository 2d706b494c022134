#!/usr/bin/env bash
# The depthwise convolution kernel (docs/convolution.md) on the depthwise
# layers of MobileNet-V2 and ConvNeXt-T and a Conformer-like depthwise
# conv1d, float32 and float16, NHWC with KRSC weights and NCHW with KCRS, in
# one run of `ogtune bench --op conv`: the default tile against the
# selected kernel (the depthwise one; the shipped database's record where it
# has one) in alternation, the GEMM of the same implicit GEMM, the im2col +
# GEMM baseline (float32), and the input's and output's bytes over the
# kernel's time against a copy of the same bytes; with the load average.
# The log goes to bench/logs/. Each line takes about a minute on 2 cores
# (most of it the default tile's, 60-100x slower).
# Usage: bench/conv_depthwise.sh  (TYPES="f32 f16", LAYOUTS="nhwc/krsc nchw/kcrs",
# LAYERS="1x144x56x56/144x3x3/s2/p1/g144 ...", LOG=bench/logs/NAME.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
types=${TYPES:-f32}
layouts=${LAYOUTS:-nhwc/krsc nchw/kcrs}
layers=${LAYERS:-1x32x112x112/32x3x3/p1/g32 1x96x56x56/96x7x7/p3/g96 1x512x1x3000/512x1x5/p0x0x2x2/g512}
log=${LOG:-bench/logs/$(date -u +%Y-%m-%d)-conv-depthwise-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt}
{
  echo "# onegpu: the depthwise convolution kernel, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# ratio: the default tile's time over the selected kernel's; of copy: a copy of x and y's bytes over the kernel's time"
  for t in $types; do
    for l in $layouts; do
      shapes=$(for s in $layers; do printf '%s/%s,' "$s" "$l"; done)
      echo
      echo "\$ ogtune bench --op conv --dtype $t --shapes ${shapes%,}"
      build/ogtune bench --op conv --dtype "$t" --shapes "${shapes%,}"
    done
  done
} 2>&1 | tee "$log"
echo "bench/conv_depthwise.sh: wrote $log"

#!/usr/bin/env bash
# Depthwise convolutions against ggml-vulkan's CONV_2D_DW on the same
# device, in one run: ggml's `test-backend-ops perf -o CONV_2D_DW` on the
# depthwise layers of its own perf list (MobileNet's 3x3 at 112x112x32 and
# a 5x5 stride 2 at 56x56x128, WHCN and CWHN) and `ogtune bench --op conv`
# on the same layers (NCHW with KCRS weights, NHWC with KRSC), alternating,
# PASSES passes, with the load average; onegpu's line also gives the
# default tile, the copy rate of the same input and output bytes and the
# kernel it selected. ggml is never built or fetched by this script: build
# test-backend-ops by hand in a scratch folder (the commands go into the
# log's header, GGML_HOW) and give its path as GGML_TBO. The log goes to
# bench/logs/.
# Usage: GGML_TBO=/path/to/test-backend-ops [GGML_HOW=file] bench/conv_vs_ggml.sh  (PASSES=n)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
: "${GGML_TBO:?give the path of test-backend-ops of ggml, built by hand (see the usage)}"
passes=${PASSES:-2}
log=bench/logs/$(date -u +%Y-%m-%d)-conv-vs-ggml-$(build/ogtune devices --json 2>/dev/null |
  grep -o '"driver":"[a-z]*' | head -1 | sed 's/.*"//').txt
# ggml's vars (ne_input W,H,C,N; ne_kernel KW,KH,1,C; cwhn 1: channels
# innermost) | onegpu's shape | the layer's floating-point operations.
layers="ne_input=[112,112,32,1],ne_kernel=[3,3,1,32],type_kernel=f32,stride=1,padding=1,dilation=1,cwhn=0|1x32x112x112/32x3x3/p1/g32/nchw/kcrs|7225344
ne_input=[112,112,32,1],ne_kernel=[3,3,1,32],type_kernel=f32,stride=1,padding=1,dilation=1,cwhn=1|1x32x112x112/32x3x3/p1/g32/nhwc/krsc|7225344
ne_input=[56,56,128,1],ne_kernel=[5,5,1,128],type_kernel=f32,stride=2,padding=2,dilation=1,cwhn=0|1x128x56x56/128x5x5/s2/p2/g128/nchw/kcrs|5017600
ne_input=[56,56,128,1],ne_kernel=[5,5,1,128],type_kernel=f32,stride=2,padding=2,dilation=1,cwhn=1|1x128x56x56/128x5x5/s2/p2/g128/nhwc/krsc|5017600"
{
  echo "# onegpu against ggml-vulkan, depthwise convolutions, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "# $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "# ggml: $GGML_TBO"
  if [ -n "${GGML_HOW:-}" ]; then sed 's/^/#   /' "$GGML_HOW"; fi
  echo "# us of one convolution (ggml: us/run of test-backend-ops perf; onegpu: from its"
  echo "# selected kernel's GFLOP/s, the median of its timestamps), then onegpu's bench line"
  for pass in $(seq "$passes"); do
    while IFS='|' read -r vars shape flops; do
      echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
      # -p is a regular expression: its brackets are escaped.
      re=$(printf '%s' "$vars" | sed 's/[][]/\\&/g')
      us=$(GGML_VK_VISIBLE_DEVICES=0 "$GGML_TBO" perf -o CONV_2D_DW -b Vulkan0 -p "$re" 2>&1 |
        grep 'CONV_2D_DW(' | sed -n 's/.* \([0-9.]*\) us\/run.*/\1/p' | head -n1)
      echo "pass $pass $shape ggml ${us:-none}"
      line=$(build/ogtune bench --op conv --shapes "$shape" | grep "^1x")
      echo "pass $pass $shape onegpu $(echo "$line" | awk -v f="$flops" '{printf "%.1f", f / ($4 * 1e3)}')"
      echo "  $line"
    done <<<"$layers"
  done
  echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
echo "bench/conv_vs_ggml.sh: wrote $log"
